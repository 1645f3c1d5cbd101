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
 *
 * A revert heals by itself (`heals`, the case of kubernetes#67250): a pod stuck at a revision that is neither
 * the stable nor the update one (a bad revision reverted, or aborted) and broken, or not ready for a while, is
 * moved without waiting for it and without spending budget, since moving it cannot lower availability; at most
 * maxUnavailable such pods are on their way at once. OrderedReady, blocked on a pod, moves only that pod, and
 * only when it heals: it is the pod the ordering waits on, so moving it is the progress. A pod not ready at
 * the stable revision is not a stuck rollout: as upstream, the rollout waits for it.
 */
import { ConditionType, Reason } from '../../../api/keys.ts';
import type { Action } from '../model/actions.ts';
import { findCondition } from '../../shared/conditions.ts';
import { collectFallbacks, updateAction, type UpdateContext } from './inplace-plan.ts';
import { getPodRevision, isFailed, isSucceeded, isTerminating, isUnavailable } from '../pods/predicates.ts';
import { isBroken, notReadySinceMs } from '../pods/broken.ts';
import type { Accumulator, PodSet } from '../pods/pod-set.ts';
import type { Pod, Stored } from '../../../kube/types.ts';
import type { SpecifiedDeletes } from './specified-delete.ts';
import { claimsGrownFor } from './volume-growth.ts';
import { priorityView } from './update-order.ts';
import { maxUnavailable, unavailableReplicas } from './unavailable.ts';

/** How long a pod at a revision neither stable nor updated stays not ready before it is healed anyway. */
export const HEAL_AFTER_MS = 30_000;

/**
 * Whether moving outdated `pod` heals it: it runs a revision that is neither the stable nor the update one,
 * it is unavailable already, and it is broken (`pods/broken.ts`) or not ready for `HEAL_AFTER_MS`, so replacing
 * it or updating it in place cannot lower availability. `wait`: when a pod not ready for less than that would
 * heal. Terminating pods and pods below the partition are never outdated candidates (`outdatedOrdinals`).
 */
export function heals(set: Pick<PodSet, 'minReadySeconds' | 'now' | 'current' | 'update'>, pod: Pod): { heals: boolean; waitMs?: number } {
  const revision = getPodRevision(pod);
  if (revision === set.current.metadata.name || revision === set.update.metadata.name) return { heals: false };
  if (!isUnavailable(pod, set.minReadySeconds, set.now)) return { heals: false };
  if (isBroken(pod)) return { heals: true };
  const since = notReadySinceMs(pod);
  if (since === undefined) return { heals: false };
  const left = since + HEAL_AFTER_MS - set.now.getTime();
  return left <= 0 ? { heals: true } : { heals: false, waitMs: left };
}

/** Pods on their way to another revision or replica: missing, terminating, or mid in-place update. */
function moving(set: PodSet, inFlight: ReadonlySet<number>): number {
  let n = 0;
  for (const ordinal of set.ordinals) {
    const pod = set.replicas.get(ordinal);
    if (!pod || isTerminating(pod) || inFlight.has(ordinal)) n++;
  }
  return n;
}

/**
 * The replica OrderedReady waits on when blocked: the lowest ordinal whose pod is missing, terminating or not
 * available (where `planReplicas` stopped). Undefined in Parallel mode, or when no replica is waited on (a
 * scale-down blocked, claims to read).
 */
export function waitedOn(set: PodSet): number | undefined {
  if (!set.monotonic) return undefined;
  return set.ordinals.find((o) => isUnavailable(set.replicas.get(o), set.minReadySeconds, set.now));
}

/** What the rolling update is given by the phases before it. */
export interface RollingInput {
  /** Spec paused, a canary pause being entered now, or the deadline pausing the rollout now. */
  paused: boolean;
  /** Ordinals whose in-place update is under way (driven elsewhere; they already count as unavailable). */
  inFlight: ReadonlySet<number>;
  /** Pods deleted for their specified-delete label, and the budget they spent. */
  specified?: SpecifiedDeletes | undefined;
  /** The scaling phase stopped (OrderedReady waits on a pod): only that pod may move, and only when it heals. */
  blocked?: boolean | undefined;
}

/**
 * The live pod at `ordinal` the rolling update may move, if any: not in flight, not a specified delete, not
 * failed, and the pod OrderedReady waits on when `only` is set.
 */
function movable(set: PodSet, ordinal: number, input: RollingInput, only: number | undefined): Stored<Pod> | undefined {
  const pod = set.replicas.get(ordinal);
  if (!pod || (only !== undefined && ordinal !== only)) return undefined;
  if (input.inFlight.has(ordinal) || input.specified?.ordinals.has(ordinal) === true) return undefined;
  // A failed pod is replaced by the scaling phase (`planReplicas`), at the revision it may run.
  return isFailed(pod) || isSucceeded(pod) ? undefined : pod;
}

/**
 * The two budgets of one rolling-update pass: maxUnavailable for ordinary moves, and for heals (which spend none of
 * it) the room left while at most maxUnavailable pods are on their way at once.
 */
interface Budgets {
  update: number;
  heal: number;
  /** Until the first pod that will heal once unavailable long enough. */
  healWait: number | undefined;
}

function budgetsFor(set: PodSet, input: RollingInput): Budgets {
  const spent = input.specified?.spent ?? 0;
  return {
    update: maxUnavailable(set) - unavailableReplicas(set) - spent,
    heal: maxUnavailable(set) - moving(set, input.inFlight) - spent,
    healWait: undefined,
  };
}

/** Which budget moving `pod` spends, or undefined when neither has room (its heal wait noted in `budgets`). */
function budgetFor(set: PodSet, pod: Stored<Pod>, budgets: Budgets): 'heal' | 'update' | undefined {
  const judged = heals(set, pod);
  if (judged.waitMs !== undefined) budgets.healWait = Math.min(budgets.healWait ?? judged.waitMs, judged.waitMs);
  if (judged.heals && budgets.heal > 0) return 'heal';
  return budgets.update > 0 ? 'update' : undefined;
}

/** Moves outdated pods within the budget, and outdated pods that heal without spending it. A pod InPlaceOnly refuses spends no budget. */
export function planRollingUpdate(ctx: UpdateContext, acc: Accumulator, input: RollingInput): void {
  const { set } = ctx;
  if (!ctx.rolling || input.paused) return;
  const only = input.blocked === true ? waitedOn(set) : undefined;
  if (input.blocked === true && only === undefined) return;
  const budgets = budgetsFor(set, input);
  for (const ordinal of outdatedOrdinals(set)) {
    const pod = movable(set, ordinal, input, only);
    const spends = pod ? budgetFor(set, pod, budgets) : undefined;
    if (!pod || !spends || !moveOutdated(ctx, acc, pod, ordinal)) continue;
    budgets[spends]--;
  }
  if (budgets.healWait !== undefined) acc.waits.push({ reason: 'heal', afterMs: budgets.healWait });
}

/** Moves outdated `pod` (recreate or an in-place step); false when InPlaceOnly refuses it (no budget spent). */
function moveOutdated(ctx: UpdateContext, acc: Accumulator, pod: Stored<Pod>, ordinal: number): boolean {
  // OnPodRollingUpdate: its claims grow first; the pod waits (holding its place in the budget) until they have.
  return claimsGrownFor(ctx.set, acc, pod, ordinal) ? updateAction(ctx, acc, pod, ordinal) : true;
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
