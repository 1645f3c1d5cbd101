/**
 * Performs one in-place step on the apiserver: at most one write, with the pod's resourceVersion as
 * precondition. Errors are the client's typed KubeErrors (409 Conflict: re-read and plan again at once) or an
 * InPlaceError; nothing is retried here.
 */
import { FieldManager } from '../../api/keys.ts';
import { core } from '../../kube/paths.ts';
import { PatchType, type KubeRest } from '../../kube/rest.ts';
import { createdGateCondition } from './gate.ts';
import { resizePatch, specPatch, statusPatch } from './patches.ts';
import type { InPlaceStep } from './step.ts';
import type { Pod } from '../../kube/types.ts';

/** The one client method the executor needs (KubeRest has it; fakes implement it). */
export type PatchClient = Pick<KubeRest, 'patch'>;

const QUERY = { fieldManager: FieldManager.ebb };

function ref(pod: Pod, subresource?: 'status' | 'resize') {
  return core('pods', pod.metadata.namespace, pod.metadata.name, subresource);
}

/**
 * Applies `step` to `pod` (the pod the step was computed from). Returns the pod as written, or undefined for
 * steps that write nothing (`wait`, `waitRunning`, `done`).
 */
export async function applyInPlaceStep<P extends Pod>(client: PatchClient, pod: P, step: InPlaceStep, signal?: AbortSignal): Promise<P | undefined> {
  switch (step.kind) {
    case 'start':
      return client.patch<P>(ref(pod, 'status'), statusPatch(pod, step.annotation, step.condition), PatchType.strategic, QUERY, signal);
    case 'gate':
      return client.patch<P>(ref(pod, 'status'), statusPatch(pod, undefined, step.condition), PatchType.strategic, QUERY, signal);
    case 'finish':
      return client.patch<P>(
        ref(pod, 'status'),
        statusPatch(pod, step.removeAnnotation ? null : undefined, step.condition, step.baseline),
        PatchType.strategic,
        QUERY,
        signal,
      );
    case 'patchSpec':
      return client.patch<P>(ref(pod), specPatch(pod, step), PatchType.json, QUERY, signal);
    case 'resize':
      return client.patch<P>(ref(pod, 'resize'), resizePatch(pod, step), PatchType.strategic, QUERY, signal);
    case 'wait':
    case 'waitRunning':
    case 'resizeRefused':
    case 'done':
      return undefined;
  }
}

/**
 * Sets gate InPlaceUpdateReady True (reason PodCreated) on a pod that has just been created (see
 * `needsGateReady`). Carries the resourceVersion read, so it can never undo an in-place update another worker
 * started meanwhile; a 409 means: re-read and decide again.
 */
export async function markGateReady<P extends Pod>(client: PatchClient, pod: P, now: Date, signal?: AbortSignal): Promise<P> {
  return client.patch<P>(ref(pod, 'status'), statusPatch(pod, undefined, createdGateCondition(pod, now)), PatchType.strategic, QUERY, signal);
}
