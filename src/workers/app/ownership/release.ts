/**
 * Releasing pods (the controller-reference manager's other half, beside adoption in `adopt.ts`): a pod the
 * App controls whose labels no longer match its selector is released, its controller reference removed, and
 * its ordinal is created anew once the name is free (it is taken until that pod is deleted).
 *
 * The App lists its pods by selector, so such a pod is never listed. It hides behind its ordinal instead: the
 * ordinal looks missing, the plan creates it, and the apiserver answers AlreadyExists. Only then is the pod
 * read by name and judged here: no read is added to a reconcile that finds every pod where it should be.
 */
import type { App } from '../../../api/app.ts';
import { ClassifiedError } from '../../../common/errors.ts';
import { EventReason } from '../../../api/keys.ts';
import type { EventSpec } from '../model/actions.ts';
import type { Pod, Stored } from '../../../kube/types.ts';
import { controllerRef } from '../pods/predicates.ts';
import { selectorMatches } from '../pods/selector.ts';

/** Who holds the name of a pod the App tried to create. */
type NameHolder =
  /** Gone since the create: the next attempt creates it. */
  | { kind: 'gone' }
  /** The App's own pod, matching its selector (a racing reconcile created it): the create is in effect. */
  | { kind: 'ours' }
  /** The App's pod, no longer matching its selector: release it; the name stays taken until it is deleted. */
  | { kind: 'release'; patch: ReleasePatch; event: EventSpec }
  /** An orphan or another controller's pod: the name is taken until it is deleted. */
  | { kind: 'foreign' };

/** A JSON merge patch: the owner references without the App's, on this very pod as read (UID and resourceVersion). */
interface ReleasePatch {
  metadata: { uid: string; resourceVersion: string; ownerReferences: NonNullable<Pod['metadata']['ownerReferences']> };
}

export function nameHolder(app: Stored<App>, pod: Stored<Pod> | undefined): NameHolder {
  if (!pod) return { kind: 'gone' };
  if (controllerRef(pod.metadata)?.uid !== app.metadata.uid) return { kind: 'foreign' };
  // A pod of an App being deleted is kept, as upstream does: the garbage collector takes it with the App.
  if (selectorMatches(app.spec.selector, pod.metadata.labels) || app.metadata.deletionTimestamp) return { kind: 'ours' };
  const name = pod.metadata.name;
  const ownerReferences = (pod.metadata.ownerReferences ?? []).filter((r) => r.uid !== app.metadata.uid);
  return {
    kind: 'release',
    patch: { metadata: { uid: pod.metadata.uid, resourceVersion: pod.metadata.resourceVersion, ownerReferences } },
    event: {
      type: 'Normal',
      reason: EventReason.releasedPod,
      action: 'Release',
      message: `released Pod ${name} from App ${app.metadata.name}: its labels no longer match the selector; the ordinal is created again once the pod is deleted`,
      related: { kind: 'Pod', name, uid: pod.metadata.uid },
    },
  };
}

/** The name of a pod to create is held by a pod the App does not (or no longer) control. Heals once it is deleted. */
export class PodNameTakenError extends ClassifiedError {
  override readonly name = 'PodNameTakenError';
  readonly code = 'PodNameTaken';
  /** Retried with backoff (the queue's transient policy): the holder may be deleted any time. */
  readonly retryClass = 'heals';
  constructor(pod: string, released: boolean) {
    super(
      released
        ? `Pod ${pod} was released (its labels no longer match the selector) and still holds the name`
        : `Pod ${pod} already exists and is not controlled by this App`,
    );
  }
}
