/**
 * Builds one container's status (state, lastState, ready, started, resources) from the simulated runtime,
 * as the kubelet's convertToAPIContainerStatuses does.
 */
import type { Container, ContainerState, ContainerStatus, Pod, ResourceRequirements } from '../../../src/kube/types.ts';
import { rfc3339 } from './k8s.ts';
import { crashBackoffMs, goDuration, pullBackoffMs, pullWaitingReason, shouldRestart, type ContainerKind } from './policy.ts';
import { restartCount, type ContainerRuntime, type Termination } from './runtime.ts';
import type { KubeletTimings } from './timings.ts';

export interface ContainerStatusContext {
  pod: Pick<Pod, 'metadata' | 'spec'>;
  now: number;
  timings: KubeletTimings;
  /** Pods with init containers show PodInitializing instead of ContainerCreating for containers not yet created. */
  defaultWaitingReason: 'ContainerCreating' | 'PodInitializing';
  /** Set once the pod was stopped for deletion: nothing restarts any more. */
  terminating: boolean;
}

export function terminatedState(t: Termination): ContainerState {
  return {
    terminated: {
      exitCode: t.exitCode,
      reason: t.reason,
      ...(t.message ? { message: t.message } : {}),
      startedAt: rfc3339(t.startedAt),
      finishedAt: rfc3339(t.finishedAt),
      containerID: t.containerId,
    },
  };
}

function lastStateOf(c: ContainerRuntime | undefined): ContainerState {
  return c?.last ? terminatedState(c.last) : {};
}

/** State and lastState of a container that is not running. */
function notRunningStates(
  spec: Container,
  c: ContainerRuntime | undefined,
  kind: ContainerKind,
  ctx: ContainerStatusContext,
): [ContainerState, ContainerState] {
  if (c?.pullFailure) {
    const f = c.pullFailure;
    const reason = pullWaitingReason(f, ctx.now, ctx.timings);
    const message = reason === 'ImagePullBackOff' ? `Back-off pulling image "${f.image}": ErrImagePull: ${f.message}` : f.message;
    const last = c.phase.kind === 'terminated' ? terminatedState(c.phase.termination) : lastStateOf(c);
    return [{ waiting: { reason, message } }, last];
  }
  if (c?.phase.kind === 'terminated') {
    const t = c.phase.termination;
    const restarting = !ctx.terminating && shouldRestart(ctx.pod, kind, t.exitCode);
    const delay = crashBackoffMs(c.crashes, ctx.timings);
    if (restarting && delay > 0 && ctx.now < t.finishedAt + delay) {
      const { name, namespace, uid } = ctx.pod.metadata;
      const message = `back-off ${goDuration(delay)} restarting failed container=${spec.name} pod=${name}_${namespace ?? ''}(${uid})`;
      return [{ waiting: { reason: 'CrashLoopBackOff', message } }, terminatedState(t)];
    }
    return [terminatedState(t), lastStateOf(c)];
  }
  return [{ waiting: { reason: ctx.defaultWaitingReason } }, lastStateOf(c)];
}

function resourcesFields(kind: ContainerKind, spec: Container, c: ContainerRuntime | undefined): Pick<ContainerStatus, 'allocatedResources' | 'resources'> {
  if (kind === 'init') return {};
  const allocated = c?.allocated ?? spec.resources ?? {};
  const actual: ResourceRequirements = c?.phase.kind === 'running' ? c.actual : allocated;
  const out: Pick<ContainerStatus, 'allocatedResources' | 'resources'> = {};
  if (allocated.requests && Object.keys(allocated.requests).length > 0) out.allocatedResources = { ...allocated.requests };
  const res: ResourceRequirements = {};
  if (actual.requests && Object.keys(actual.requests).length > 0) res.requests = { ...actual.requests };
  if (actual.limits && Object.keys(actual.limits).length > 0) res.limits = { ...actual.limits };
  if (res.requests || res.limits) out.resources = res;
  return out;
}

/**
 * Ready once its probe passed, but not on the way out: a container whose exit is due (a crash at the moment its
 * probe would first pass) is never reported ready.
 */
function readyNow(running: { readyAt: number; exitAt?: number | undefined }, now: number): boolean {
  return now >= running.readyAt && (running.exitAt === undefined || now < running.exitAt);
}

export function buildContainerStatus(spec: Container, c: ContainerRuntime | undefined, kind: ContainerKind, ctx: ContainerStatusContext): ContainerStatus {
  const running = c?.phase.kind === 'running' && !c.pullFailure ? c.phase : undefined;
  let state: ContainerState;
  let lastState: ContainerState;
  let ready = false;
  let started = false;
  if (running) {
    state = { running: { startedAt: rfc3339(running.startedAt) } };
    lastState = lastStateOf(c);
    started = ctx.now >= running.startedProbeAt;
    ready = started && readyNow(running, ctx.now);
  } else {
    [state, lastState] = notRunningStates(spec, c, kind, ctx);
    // A completed init container reports ready, which is what makes the pod Initialized.
    ready = kind === 'init' && state.terminated?.exitCode === 0;
  }
  const created = c !== undefined && c.created > 0;
  const status: ContainerStatus = {
    name: spec.name,
    image: created ? c.image : spec.image,
    imageID: created ? c.imageRef : '',
    ...(created ? { containerID: c.containerId } : {}),
    ready,
    started,
    restartCount: restartCount(c),
    state,
    lastState,
    ...resourcesFields(kind, spec, c),
  };
  if (spec.volumeMounts && spec.volumeMounts.length > 0) {
    status.volumeMounts = spec.volumeMounts.map((m) => ({
      name: m.name,
      mountPath: m.mountPath,
      ...(m.readOnly ? { readOnly: true, recursiveReadOnly: 'Disabled' } : {}),
    }));
  }
  return status;
}

/** Exposed for the planner: the next time this container's status changes on its own (ready, back-off end). */
export function nextStatusChange(c: ContainerRuntime, now: number, timings: KubeletTimings): number | undefined {
  const times: number[] = [];
  if (c.phase.kind === 'running') times.push(c.phase.startedProbeAt, c.phase.readyAt);
  if (c.pullFailure?.reason === 'ErrImagePull') times.push(c.pullFailure.at + pullBackoffMs(c.pullFailure, timings) / 2);
  const future = times.filter((t) => t > now);
  return future.length > 0 ? Math.min(...future) : undefined;
}
