/**
 * Rebuilds the runtime state of a pod that was already running on this node before the simulated kubelet
 * (re)started, from the status the previous instance posted — as a real kubelet finds its containers through
 * the runtime after a restart — so a restart of the sandbox's nodes does not restart every container.
 */
import type { ContainerStatus, Pod, Stored } from '../../../src/kube/types.ts';
import type { NodeContext } from './node-context.ts';
import { newPodRuntime, type ContainerRuntime, type PodRuntime } from './runtime.ts';

function parseTime(s: string | undefined, fallback: number): number {
  const t = s === undefined ? NaN : Date.parse(s);
  return Number.isNaN(t) ? fallback : t;
}

function adoptContainer(s: ContainerStatus, resources: ContainerRuntime['allocated'], now: number): ContainerRuntime | undefined {
  const running = s.state.running;
  if (!running || !s.containerID) return undefined;
  const startedAt = parseTime(running.startedAt, now);
  const prev = s.lastState.terminated;
  return {
    name: s.name,
    image: s.image,
    imageRef: s.imageID,
    containerId: s.containerID,
    created: s.restartCount + 1,
    phase: { kind: 'running', startedAt, startedProbeAt: startedAt, readyAt: s.ready ? startedAt : now },
    ...(prev
      ? {
          last: {
            exitCode: prev.exitCode,
            reason: prev.reason ?? '',
            startedAt: parseTime(prev.startedAt, startedAt),
            finishedAt: parseTime(prev.finishedAt, startedAt),
            containerId: prev.containerID ?? '',
          },
        }
      : {}),
    crashes: 0,
    allocated: resources,
    actual: s.resources ?? resources,
  };
}

function adoptTerminated(s: ContainerStatus, resources: ContainerRuntime['allocated'], now: number): ContainerRuntime | undefined {
  const t = s.state.terminated;
  if (!t || !s.containerID) return undefined;
  const termination = {
    exitCode: t.exitCode,
    reason: t.reason ?? '',
    startedAt: parseTime(t.startedAt, now),
    finishedAt: parseTime(t.finishedAt, now),
    containerId: s.containerID,
  };
  return {
    name: s.name,
    image: s.image,
    imageRef: s.imageID,
    containerId: s.containerID,
    created: s.restartCount + 1,
    phase: { kind: 'terminated', termination },
    crashes: 0,
    allocated: resources,
    actual: resources,
  };
}

function allStatuses(pod: Stored<Pod>): ContainerStatus[] {
  const status = pod.status ?? {};
  return [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])];
}

/** The adopted runtime, or undefined for a pod this node has not run yet. */
export function adoptRuntime(pod: Stored<Pod>, ctx: Pick<NodeContext, 'now' | 'ips'>): PodRuntime | undefined {
  const ip = pod.status?.podIP;
  if (!ip || pod.metadata.deletionTimestamp) return undefined;
  const now = ctx.now();
  const rt = newPodRuntime(pod.metadata.uid, parseTime(pod.status?.startTime, now));
  rt.volumesReadyAt = now;
  rt.sandbox = { ip, readyAt: now };
  ctx.ips.reserve(pod.metadata.uid, ip);
  for (const s of allStatuses(pod)) {
    const spec = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((c) => c.name === s.name);
    const resources = spec?.resources ?? {};
    const c = spec ? (adoptContainer(s, resources, now) ?? adoptTerminated(s, resources, now)) : undefined;
    if (c) rt.containers[c.name] = c;
  }
  return rt;
}
