/** The unavailability budget of a rolling update: how many replicas may be unavailable, and how many are. */
import { maxUnavailableOf } from '../../../api/int-or-percent.ts';
import type { PodSet } from '../pods/pod-set.ts';
import { isUnavailable } from '../pods/predicates.ts';

export function unavailableReplicas(set: PodSet): number {
  let n = 0;
  for (const ordinal of set.ordinals) if (isUnavailable(set.replicas.get(ordinal), set.minReadySeconds, set.now)) n++;
  return n;
}

export function maxUnavailable(set: PodSet): number {
  const r = maxUnavailableOf(set.rollout.maxUnavailable, set.ordinals.length);
  return r.ok ? r.value : 1;
}
