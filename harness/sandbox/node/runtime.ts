/**
 * What the simulated container runtime knows about one pod: its sandbox, and for every container the latest
 * instance and the one before. Times are epoch milliseconds. Transitions are pure functions that return a new
 * state; the pod worker applies them after it has charged the simulated delay.
 */
import type { ResourceRequirements } from '../../../src/kube/types.ts';

export interface Termination {
  exitCode: number;
  reason: string;
  message?: string;
  startedAt: number;
  finishedAt: number;
  containerId: string;
}

/** The latest container instance, or the reason there is none running. */
export type ContainerPhase =
  | { kind: 'waiting' }
  | {
      kind: 'running';
      startedAt: number;
      /** `started` (startup probe passed) from this time. */
      startedProbeAt: number;
      /** Ready (readiness probe passed) from this time. */
      readyAt: number;
      /** The simulated process exits at this time (crash fault, or an init container's natural end). */
      exitAt?: number;
      exitCode?: number;
    }
  | { kind: 'terminated'; termination: Termination };

export interface PullFailure {
  /** The image that failed (the back-off is per image, as the kubelet keys it by pod UID and image). */
  image: string;
  reason: 'ErrImagePull' | 'ErrImageNeverPull' | 'InvalidImageName';
  message: string;
  /** Consecutive failures (drives the back-off). */
  failures: number;
  at: number;
}

export interface ContainerRuntime {
  name: string;
  /** The spec image the latest instance was created from (what status.image reports). */
  image: string;
  /** `repo@sha256:…` of the latest instance (status.imageID). */
  imageRef: string;
  containerId: string;
  /** Instances created so far; restartCount is this minus one. */
  created: number;
  phase: ContainerPhase;
  /** The instance before the latest one, once it ended (status.lastState). */
  last?: Termination;
  pullFailure?: PullFailure;
  /** Consecutive crashes (drives the crash-loop back-off); reset when a container runs long enough. */
  crashes: number;
  /** Resources admitted by the kubelet (status.allocatedResources are their requests). */
  allocated: ResourceRequirements;
  /** Resources the running container has (status.resources). */
  actual: ResourceRequirements;
}

export interface ResizeVerdict {
  reason: 'Deferred' | 'Infeasible';
  message: string;
}

export interface PodRuntime {
  uid: string;
  /** First time the kubelet saw the pod (status.startTime). */
  startTime: number;
  volumesReadyAt?: number;
  sandbox?: { ip: string; readyAt: number };
  containers: Record<string, ContainerRuntime>;
  /** A resize the kubelet cannot admit now (PodResizePending). */
  resizePending?: ResizeVerdict;
  /** Set once the pod's containers were stopped for deletion. */
  terminated?: boolean;
}

export function newPodRuntime(uid: string, now: number): PodRuntime {
  return { uid, startTime: now, containers: {} };
}

export function emptyContainer(name: string, image: string, resources: ResourceRequirements): ContainerRuntime {
  return { name, image, imageRef: '', containerId: '', created: 0, phase: { kind: 'waiting' }, crashes: 0, allocated: resources, actual: resources };
}

export function restartCount(c: ContainerRuntime | undefined): number {
  return c ? Math.max(0, c.created - 1) : 0;
}

function put(rt: PodRuntime, c: ContainerRuntime): PodRuntime {
  return { ...rt, containers: { ...rt.containers, [c.name]: c } };
}

export function withSandbox(rt: PodRuntime, ip: string, now: number): PodRuntime {
  return { ...rt, sandbox: { ip, readyAt: now } };
}

export function withVolumesReady(rt: PodRuntime, now: number): PodRuntime {
  return { ...rt, volumesReadyAt: now };
}

export interface StartedContainer {
  name: string;
  image: string;
  imageRef: string;
  containerId: string;
  now: number;
  /** Delay until `started`, then until `ready`, after the start. */
  startupMs: number;
  readinessMs: number;
  exit?: { afterMs: number; exitCode: number };
  resources: ResourceRequirements;
}

/** A new container instance runs; a previous one (which must have ended) becomes lastState. */
export function withContainerStarted(rt: PodRuntime, s: StartedContainer): PodRuntime {
  const prev = rt.containers[s.name];
  const last = prev?.phase.kind === 'terminated' ? prev.phase.termination : prev?.last;
  const startedProbeAt = s.now + s.startupMs;
  const phase: ContainerPhase = {
    kind: 'running',
    startedAt: s.now,
    startedProbeAt,
    readyAt: startedProbeAt + s.readinessMs,
    ...(s.exit ? { exitAt: s.now + s.exit.afterMs, exitCode: s.exit.exitCode } : {}),
  };
  const next: ContainerRuntime = {
    name: s.name,
    image: s.image,
    imageRef: s.imageRef,
    containerId: s.containerId,
    created: (prev?.created ?? 0) + 1,
    phase,
    ...(last ? { last } : {}),
    crashes: prev?.crashes ?? 0,
    allocated: s.resources,
    actual: s.resources,
  };
  return put(rt, next);
}

/** The running instance ended (it exited, or the kubelet stopped it). */
export function withContainerExited(rt: PodRuntime, name: string, exit: { exitCode: number; reason: string; now: number; crashed: boolean }): PodRuntime {
  const c = rt.containers[name];
  if (!c || c.phase.kind !== 'running') return rt;
  const termination: Termination = {
    exitCode: exit.exitCode,
    reason: exit.reason,
    startedAt: c.phase.startedAt,
    finishedAt: exit.now,
    containerId: c.containerId,
  };
  return put(rt, { ...c, phase: { kind: 'terminated', termination }, crashes: exit.crashed ? c.crashes + 1 : 0 });
}

/** A pull for this container failed; a running instance (if any) had already been stopped. */
export function withPullFailed(rt: PodRuntime, name: string, f: Omit<PullFailure, 'failures'>, resources: ResourceRequirements): PodRuntime {
  const c = rt.containers[name] ?? emptyContainer(name, f.image, resources);
  const failures = c.pullFailure?.image === f.image ? c.pullFailure.failures + 1 : 1;
  const base = c.created === 0 ? { ...c, image: f.image } : c;
  return put(rt, { ...base, pullFailure: { ...f, failures } });
}

export function withPullSucceeded(rt: PodRuntime, name: string): PodRuntime {
  const c = rt.containers[name];
  if (!c?.pullFailure) return rt;
  const { pullFailure: _dropped, ...rest } = c;
  return put(rt, rest);
}

/** The kubelet admitted new resources for a running container (actuation follows). */
export function withResizeAllocated(rt: PodRuntime, name: string, resources: ResourceRequirements): PodRuntime {
  const c = rt.containers[name];
  if (!c) return rt;
  const { resizePending: _cleared, ...rest } = rt;
  return put(rest, { ...c, allocated: resources });
}

/** The runtime applied the allocated resources to the running container. */
export function withResizeActuated(rt: PodRuntime, name: string): PodRuntime {
  const c = rt.containers[name];
  if (!c) return rt;
  return put(rt, { ...c, actual: c.allocated });
}

export function withResizePending(rt: PodRuntime, verdict: ResizeVerdict | undefined): PodRuntime {
  if (verdict === undefined) {
    const { resizePending: _cleared, ...rest } = rt;
    return rest;
  }
  return { ...rt, resizePending: verdict };
}

/** All containers stopped for deletion: running instances end with exit code 0. */
export function withAllStopped(rt: PodRuntime, now: number): PodRuntime {
  let out = rt;
  for (const c of Object.values(rt.containers)) {
    if (c.phase.kind === 'running') out = withContainerExited(out, c.name, { exitCode: 0, reason: 'Completed', now, crashed: false });
  }
  return { ...out, terminated: true };
}
