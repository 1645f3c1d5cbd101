/**
 * `spec.scaleStrategy.maxUnavailable` (Parallel only): a missing replica is created only while fewer than that
 * many of the App's replicas are unavailable, counting the pods this plan creates (a new pod is not ready
 * yet). Pods being removed (scale-down, reserved ordinals) are leaving and do not count.
 */
import { maxUnavailableOf } from '../../../api/int-or-percent.ts';
import { isUnavailable } from '../pods/predicates.ts';
import type { Accumulator, PodSet } from '../pods/pod-set.ts';

interface ScaleUpGate {
  /** Whether one more pod may be created now; counts it when so, and counts a held one otherwise. */
  admit(): boolean;
}

/** The gate for this plan's creations; undefined when no limit applies (unset, or OrderedReady). */
export function scaleUpGate(set: PodSet, acc: Accumulator): ScaleUpGate | undefined {
  const value = set.app.spec.scaleStrategy?.maxUnavailable;
  if (value === undefined || set.monotonic) return undefined;
  const r = maxUnavailableOf(value, set.ordinals.length);
  const limit = r.ok ? r.value : 1;
  let unavailable = 0;
  for (const pod of set.replicas.values()) if (isUnavailable(pod, set.minReadySeconds, set.now)) unavailable++;
  return {
    admit: () => {
      if (unavailable < limit) {
        unavailable++;
        return true;
      }
      // Counting the pods this plan creates, as the status written with them counts them.
      const scaleUp = acc.deferred?.scaleUp ?? { held: 0, unavailable, limit };
      acc.deferred = { ...acc.deferred, scaleUp: { ...scaleUp, held: scaleUp.held + 1 } };
      return false;
    },
  };
}
