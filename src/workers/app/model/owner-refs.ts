/** The owner reference from an App to the objects ebb creates for it: its pods and ControllerRevisions. */
import type { App } from '../../../api/app.ts';
import { API_VERSION, APP_KIND } from '../../../api/group.ts';
import type { OwnerReference, Stored } from '../../../kube/types.ts';

/** The controller reference an App puts on its pods and ControllerRevisions (GC waits for them on foreground deletion). */
export function appControllerRef(app: Stored<App>): OwnerReference {
  return { apiVersion: API_VERSION, kind: APP_KIND, name: app.metadata.name, uid: app.metadata.uid, controller: true, blockOwnerDeletion: true };
}
