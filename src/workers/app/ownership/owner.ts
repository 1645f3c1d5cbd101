/**
 * `ownership/` owns who owns what: owner references (this file), adopting orphans (`adopt.ts`), releasing pods
 * that left the selector (`release.ts`, `release-apply.ts`) and the claims' owners under the retention policy
 * (`pvc-retention.ts`).
 *
 * Owner references from an App (and its pods) to the objects ebb creates for it.
 */
import type { App } from '../../../api/app.ts';
import { API_VERSION, APP_KIND } from '../../../api/group.ts';
import type { OwnerReference, Pod, Stored } from '../../../kube/types.ts';

/** The controller reference an App puts on its pods and ControllerRevisions (GC waits for them on foreground deletion). */
export function appControllerRef(app: Stored<App>): OwnerReference {
  return { apiVersion: API_VERSION, kind: APP_KIND, name: app.metadata.name, uid: app.metadata.uid, controller: true, blockOwnerDeletion: true };
}

/**
 * The controller reference of a condemned pod on its claims under `whenScaled: Delete`, as the StatefulSet
 * controller sets it (controller and blockOwnerDeletion true): the claim goes when the pod goes.
 */
export function podControllerRef(pod: Stored<Pod>): OwnerReference {
  return { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid, controller: true, blockOwnerDeletion: true };
}
