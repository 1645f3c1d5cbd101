/** The delete of a pod, with the revision it runs and, when it is recreated, its replacement. */
import type { Action, DeleteCause, Replacement } from '../model/actions.ts';
import type { Pod, Stored } from '../../../kube/types.ts';
import { getPodRevision } from './predicates.ts';

export function deletePod(pod: Stored<Pod>, ordinal: number, cause: DeleteCause, replacement?: Replacement): Action {
  return { kind: 'deletePod', name: pod.metadata.name, uid: pod.metadata.uid, ordinal, cause, revision: getPodRevision(pod), replacement };
}
