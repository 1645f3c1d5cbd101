/**
 * `ownership/` owns who owns what: owner references (this file), adopting orphans (`adopt.ts`), releasing pods
 * that left the selector (`release.ts`, `release-apply.ts`) and the claims' owners under the retention policy
 * (`pvc-retention.ts`).
 *
 * Owner references from an App's pods to the objects ebb creates for them (the App's own: `model/owner-refs.ts`).
 */
import type { OwnerReference, Pod, Stored } from '../../../kube/types.ts';

/**
 * The controller reference of a condemned pod on its claims under `whenScaled: Delete`, as the StatefulSet
 * controller sets it (controller and blockOwnerDeletion true): the claim goes when the pod goes.
 */
export function podControllerRef(pod: Stored<Pod>): OwnerReference {
  return { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid, controller: true, blockOwnerDeletion: true };
}
