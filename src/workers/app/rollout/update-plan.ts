/**
 * `rollout/` owns the rolling update: the order (this file, `update-order.ts`), its settings (`settings.ts`),
 * canary steps, the progress deadline and other guards, specified deletes, in-place steps (`inplace-plan.ts`)
 * and growing claims (`volume-growth.ts`).
 *
 * The rolling update (upstream updateStatefulSetAfterInvariantEstablished): from the highest ordinal down to
 * the partition, move pods not at the update revision — recreated, or updated in place per `podUpdatePolicy`
 * — never letting more than maxUnavailable replicas be unavailable (missing, terminating, not yet available
 * or being updated in place all count). OnDelete and paused start nothing; in-place updates already under
 * way are driven by `planInFlight` whatever the state of the rollout.
 */
import { ConditionType, Reason } from '../../../api/keys.ts';
import { maxUnavailableOf } from '../../../api/int-or-percent.ts';
import type { Action } from '../actions.ts';
import { findCondition } from '../status/conditions.ts';
import { collectFallbacks, updateAction, type UpdateContext } from './inplace-plan.ts';
import { getPodRevision, isTerminating, isUnavailable } from '../pods/predicates.ts';
import type { Accumulator, PodSet } from '../pods/pod-set.ts';
import type { Pod } from '../../../kube/types.ts';
import type { SpecifiedDeletes } from './specified-delete.ts';
import { claimsGrownFor } from './volume-growth.ts';
import { priorityView } from './update-order.ts';

export function unavailableReplicas(set: PodSet): number {
  let n = 0;
  for (const ordinal of set.ordinals) if (isUnavailable(set.replicas.get(ordinal), set.minReadySeconds, set.now)) n++;
  return n;
}

export function maxUnavailable(set: PodSet): number {
  const r = maxUnavailableOf(set.app.spec.updateStrategy?.rollingUpdate?.maxUnavailable, set.ordinals.length);
  return r.ok ? r.value : 1;
}

/**
 * `paused`: spec paused, or a canary pause being entered now. `inFlight`: ordinals whose in-place update is
 * under way (driven elsewhere; they already count as unavailable). `specified`: pods deleted for their
 * specified-delete label, and the budget they spent. A pod InPlaceOnly refuses spends no budget.
 */
export function planRollingUpdate(
  ctx: UpdateContext,
  acc: Accumulator,
  paused: boolean,
  inFlight: ReadonlySet<number>,
  specified: SpecifiedDeletes = { ordinals: new Set(), spent: 0 },
): void {
  const { set } = ctx;
  if (!ctx.rolling || paused) return;
  let budget = maxUnavailable(set) - unavailableReplicas(set) - specified.spent;
  for (const ordinal of outdatedOrdinals(set)) {
    if (budget <= 0) break;
    const pod = set.replicas.get(ordinal);
    if (!pod || inFlight.has(ordinal) || specified.ordinals.has(ordinal)) continue;
    // OnPodRollingUpdate: its claims grow first; the pod waits (holding its place in the budget) until they have.
    if (!claimsGrownFor(set, acc, pod, ordinal)) budget--;
    else if (updateAction(ctx, acc, pod, ordinal)) budget--;
  }
}

/**
 * The update order: ordinals from the highest down to the partition (`floor`, by default the one in force)
 * whose live pod does not run the update revision. Pre-warming follows the same order, down to the spec
 * partition (a canary step only holds pods back for a while). With a priority strategy, its order (`update-order.ts`).
 */
export function outdatedOrdinals(
  set: Pick<PodSet, 'app' | 'rollout' | 'start' | 'end' | 'ordinals' | 'partition' | 'update'> & { replicas: ReadonlyMap<number, Pod> },
  floor: number = set.partition,
): number[] {
  const strategy = set.rollout.priorityStrategy;
  if (strategy) return [...priorityView(set, strategy, floor).outdated];
  const out: number[] = [];
  for (let i = set.ordinals.length - 1; i >= 0; i--) {
    const ordinal = set.ordinals[i] ?? -1;
    if (ordinal < floor) break;
    const pod = set.replicas.get(ordinal);
    if (pod && !isTerminating(pod) && getPodRevision(pod) !== set.update.metadata.name) out.push(ordinal);
  }
  return out;
}

/**
 * Fills `acc.fallbacks` (the InPlaceFallback condition) and, when InPlaceOnly newly refuses a pod (the
 * condition is new or says something else now), plans the Event and log line for it. Fallbacks to recreation
 * are reported when their pod is deleted.
 */
export function planFallbackReport(ctx: UpdateContext, acc: Accumulator): void {
  collectFallbacks(ctx, acc);
  const first = acc.fallbacks?.[0];
  if (first?.condition.reason !== Reason.inPlaceOnlyRefused) return;
  const previous = findCondition(ctx.set.app.status?.conditions, ConditionType.inPlaceFallback);
  if (previous?.status === 'True' && previous.reason === first.condition.reason && previous.message === first.condition.message) return;
  const action: Action = { kind: 'event', event: first.event, log: first.log };
  acc.actions.push(action);
}
