/**
 * Small kubelet predicates shared by the step planner and the status builder: pull policy, restart policy,
 * back-offs and container kinds. Named after their upstream counterparts where there is one.
 */
import { parseImageReference } from '../../../src/api/image-ref.ts';
import type { Container, Pod } from '../../../src/kube/types.ts';
import type { ContainerRuntime, PullFailure } from './runtime.ts';
import { backoffFor, type KubeletTimings } from './timings.ts';

export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/** The container's pull policy; when unset, what the apiserver defaults it to (`:latest` or no tag → Always). */
export function effectivePullPolicy(c: Pick<Container, 'image' | 'imagePullPolicy'>): PullPolicy {
  if (c.imagePullPolicy === 'Always' || c.imagePullPolicy === 'IfNotPresent' || c.imagePullPolicy === 'Never') return c.imagePullPolicy;
  const parsed = parseImageReference(c.image);
  if (!parsed.ok) return 'IfNotPresent';
  return parsed.ref.digest === undefined && parsed.ref.tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** Upstream shouldPullImage: Always pulls, Never never does, IfNotPresent only when the image is absent. */
export function shouldPullImage(policy: PullPolicy, present: boolean): boolean {
  if (policy === 'Always') return true;
  if (policy === 'Never') return false;
  return !present;
}

/** A restartable init container (`restartPolicy: Always` on an init container). */
export function isSidecar(c: Pick<Container, 'restartPolicy'>): boolean {
  return c.restartPolicy === 'Always';
}

export type ContainerKind = 'init' | 'sidecar' | 'regular';

/** Whether an ended container instance is started again (pod restartPolicy; init containers: until success). */
export function shouldRestart(pod: Pick<Pod, 'spec'>, kind: ContainerKind, exitCode: number): boolean {
  if (kind === 'sidecar') return true;
  const policy = pod.spec.restartPolicy ?? 'Always';
  if (kind === 'init') return exitCode !== 0 && policy !== 'Never';
  if (policy === 'Always') return true;
  if (policy === 'OnFailure') return exitCode !== 0;
  return false;
}

/** Delay before the restart following the n-th consecutive crash: the first restart is immediate. */
export function crashBackoffMs(crashes: number, t: Pick<KubeletTimings, 'crashBackoffMs' | 'crashBackoffCapMs'>): number {
  return crashes <= 1 ? 0 : backoffFor(crashes - 1, t.crashBackoffMs, t.crashBackoffCapMs);
}

export function pullBackoffMs(f: PullFailure, t: Pick<KubeletTimings, 'pullBackoffMs' | 'pullBackoffCapMs'>): number {
  return backoffFor(f.failures, t.pullBackoffMs, t.pullBackoffCapMs);
}

/** When the next pull attempt is due. */
export function pullRetryAt(f: PullFailure, t: Pick<KubeletTimings, 'pullBackoffMs' | 'pullBackoffCapMs'>): number {
  return f.at + pullBackoffMs(f, t);
}

/**
 * A failed pull reads ErrImagePull for the first half of its back-off window and ImagePullBackOff for the
 * second (a real kubelet shows ErrImagePull until its next sync finds the image in back-off).
 */
export function pullWaitingReason(f: PullFailure, now: number, t: Pick<KubeletTimings, 'pullBackoffMs' | 'pullBackoffCapMs'>): string {
  if (f.reason !== 'ErrImagePull') return f.reason;
  return now < f.at + pullBackoffMs(f, t) / 2 ? 'ErrImagePull' : 'ImagePullBackOff';
}

/** When a terminated container that will restart is due to start again. */
export function restartDueAt(c: ContainerRuntime, t: Pick<KubeletTimings, 'crashBackoffMs' | 'crashBackoffCapMs'>): number | undefined {
  if (c.phase.kind !== 'terminated') return undefined;
  return c.phase.termination.finishedAt + crashBackoffMs(c.crashes, t);
}

/** Formats milliseconds like Go's time.Duration.String() (`400ms`, `10s`, `1m20s`, `5m0s`). */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const totalSeconds = ms / 1000;
  const minutes = Math.floor(totalSeconds / 60);
  const seconds = +(totalSeconds - minutes * 60).toFixed(3);
  if (minutes === 0) return `${seconds}s`;
  const hours = Math.floor(minutes / 60);
  if (hours === 0) return `${minutes}m${seconds}s`;
  return `${hours}h${minutes - hours * 60}m${seconds}s`;
}

/** Whether containers of this image crash on this node (fault list or pattern). */
export function crashes(image: string, faults: { crashImages: readonly string[]; crashImagePattern: string }): boolean {
  if (imageMatches(image, faults.crashImages)) return true;
  if (faults.crashImagePattern === '') return false;
  try {
    return new RegExp(faults.crashImagePattern).test(image);
  } catch {
    return false;
  }
}

/** The spec image as the fault lists and the store compare it (`nginx` → `docker.io/library/nginx:latest`). */
export function imageMatches(image: string, list: readonly string[]): boolean {
  if (list.length === 0) return false;
  const norm = (s: string): string => {
    const p = parseImageReference(s);
    return p.ok ? `${p.ref.domain}/${p.ref.path}:${p.ref.tag ?? ''}@${p.ref.digest ?? ''}` : s;
  };
  const wanted = norm(image);
  return list.some((x) => norm(x) === wanted);
}
