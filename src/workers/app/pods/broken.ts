/**
 * A pod stuck where waiting will not help, judged from its status alone: a container (init containers
 * included) in CrashLoopBackOff or failing to pull its image, or the pod still Pending (not scheduled, or its
 * containers never created). And since when a pod is not ready, for rules that act only after a while.
 */
import type { Pod } from '../../../kube/types.ts';
import { isPending, readyCondition } from './predicates.ts';

/** Waiting reasons of a container that will not start by itself. */
const STUCK_REASONS: ReadonlySet<string> = new Set(['CrashLoopBackOff', 'ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

export function isBroken(pod: Pod): boolean {
  if (isPending(pod)) return true;
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  return statuses.some((c) => STUCK_REASONS.has(c.state.waiting?.reason ?? ''));
}

/**
 * Since when (epoch ms) `pod` has not been ready: its Ready condition's last transition to False, else its
 * creation. Undefined when it is ready (a ready pod waiting out minReadySeconds is on its way).
 */
export function notReadySinceMs(pod: Pod): number | undefined {
  const ready = readyCondition(pod);
  if (ready?.status === 'True') return undefined;
  const since = Date.parse(ready?.lastTransitionTime ?? pod.metadata.creationTimestamp ?? '');
  return Number.isNaN(since) ? undefined : since;
}
