/**
 * When an in-place update of a container is complete: the container runs its new
 * image — its imageID differs from the recorded one, or it was restarted (containerID changed or restartCount
 * grew), the second clause covering a tag that moved to the same digest — it started no earlier than its batch
 * was patched, and it is ready. `state.running.startedAt` has second precision, so the patch time is truncated
 * to whole seconds before the comparison.
 */
import { findContainer, findStatus, type InPlaceState } from './state.ts';
import { sameResizable } from '../../common/quantity.ts';
import type { ContainerStatus, Pod } from '../../kube/types.ts';

/** Why a container is not done yet; undefined when it is. */
export type Pending = { container: string; reason: string } | undefined;

const wholeSecond = (ms: number): number => Math.floor(ms / 1000) * 1000;

/** The kubelet has not reported status for the pod's latest spec yet (status.observedGeneration, Kubernetes ≥ 1.33). */
export function statusIsStale(pod: Pod): boolean {
  const observed = pod.status?.observedGeneration;
  const generation = pod.metadata.generation;
  return observed !== undefined && generation !== undefined && observed < generation;
}

/** The container runs an instance other than the one recorded: a new image, or a restart. */
function runsNewInstance(s: ContainerStatus, state: InPlaceState, container: string): boolean {
  const imageID = s.imageID ?? '';
  if (imageID !== '' && imageID !== state.oldImageIDs[container]) return true;
  if ((s.containerID ?? '') !== (state.oldContainerIDs[container] ?? '')) return true;
  return (s.restartCount ?? 0) > (state.oldRestartCounts[container] ?? 0);
}

/** Whether `container`, patched at `patchedAt` (ms), runs its new image and is ready. */
export function containerPending(pod: Pod, state: InPlaceState, container: string, patchedAt: number): Pending {
  const found = findContainer(pod, container);
  // A regular init container already ran; its new image is used the next time the pod sandbox starts.
  if (found?.init && found.spec.restartPolicy !== 'Always') return undefined;
  const s = findStatus(pod, container);
  const startedAt = Date.parse(s?.state?.running?.startedAt ?? '');
  if (!s || Number.isNaN(startedAt)) return { container, reason: 'ContainerNotRunning' };
  if (!runsNewInstance(s, state, container) || startedAt < wholeSecond(patchedAt)) return { container, reason: 'ContainerNotRestarted' };
  return s.ready === true ? undefined : { container, reason: 'ContainerNotReady' };
}

/** The longest part of a kubelet message ebb repeats in its conditions and Events. */
const KUBELET_MESSAGE_MAX = 256;

/** A kubelet message fit to quote: control characters become spaces, and it is cut at a bound. */
export function quoteKubeletMessage(message: string | undefined): string {
  // eslint-disable-next-line no-control-regex
  const clean = (message ?? '').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return clean.length > KUBELET_MESSAGE_MAX ? `${clean.slice(0, KUBELET_MESSAGE_MAX - 1)}…` : clean;
}

const condition = (pod: Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type && c.status === 'True');

/**
 * The kubelet refused the pod's resize for a cause that waiting does not heal: `PodResizeInProgress=True` with
 * reason `Error` (it keeps retrying and failing, such as lowering the memory limit of a container restarted in
 * place), or `PodResizePending=True` with reason `Infeasible` (the pod would need more than its node's
 * allocatable, which no other pod's exit frees; a `Deferred` resize is different: it waits for room). Returns
 * the kubelet's message, quoted; undefined when there is no refusal.
 */
export function resizeRefusal(pod: Pod): string | undefined {
  const inProgress = condition(pod, 'PodResizeInProgress');
  if (inProgress?.reason === 'Error') return quoteKubeletMessage(inProgress.message ?? 'resize failed');
  const pending = condition(pod, 'PodResizePending');
  if (pending?.reason === 'Infeasible') return quoteKubeletMessage(`infeasible on its node: ${pending.message ?? 'not enough capacity'}`);
  return undefined;
}

/**
 * A resized container is done when the kubelet says so: it has observed the pod's spec, no resize is pending
 * or in progress (`PodResizePending`, `PodResizeInProgress`), it reports the spec's resources as actual, and
 * the container is ready. `ResizeRefused` (see resizeRefusal) is final for this pod: the caller decides what
 * to do with it, waiting does not help.
 */
export function resizePending(pod: Pod, container: string): Pending {
  if (statusIsStale(pod)) return { container, reason: 'StatusNotObserved' };
  if (resizeRefusal(pod) !== undefined) return { container, reason: 'ResizeRefused' };
  const pending = condition(pod, 'PodResizePending');
  if (pending) return { container, reason: 'ResizeDeferred' };
  if (condition(pod, 'PodResizeInProgress')) return { container, reason: 'ResizeInProgress' };
  const spec = findContainer(pod, container)?.spec;
  const s = findStatus(pod, container);
  if (!s?.resources || !sameResizable(s.resources, spec?.resources)) return { container, reason: 'ResizeNotActuated' };
  return s.ready === true ? undefined : { container, reason: 'ContainerNotReady' };
}

/** The first container of batch `index` that is not done. */
export function batchPending(pod: Pod, state: InPlaceState, index: number): Pending {
  if (statusIsStale(pod)) return { container: '', reason: 'StatusNotObserved' };
  const patchedAt = Date.parse(state.patchedAt[index] ?? state.startedAt);
  for (const c of state.batches[index] ?? []) {
    const p = containerPending(pod, state, c, patchedAt);
    if (p) return p;
  }
  return undefined;
}

/** The first updated or resized container that is not done, over every batch. */
export function updatePending(pod: Pod, state: InPlaceState): Pending {
  for (let i = 0; i < state.batches.length; i++) {
    const p = batchPending(pod, state, i);
    if (p) return p;
  }
  for (const c of Object.keys(state.resources)) {
    const p = resizePending(pod, c);
    if (p) return p;
  }
  return undefined;
}
