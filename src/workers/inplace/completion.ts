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

/** A resized container is done when the kubelet reports the spec's resources as actual and it is ready. */
export function resizePending(pod: Pod, container: string): Pending {
  const spec = findContainer(pod, container)?.spec;
  const s = findStatus(pod, container);
  const infeasible = pod.status?.conditions?.some((c) => c.type === 'PodResizePending' && c.status === 'True' && c.reason === 'Infeasible');
  if (infeasible) return { container, reason: 'ResizeInfeasible' };
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
