/**
 * Lifecycle hooks in the App plan (pure). Two parts:
 * - `planPrepared`: pods the rolling update already moved into a lifecycle state (PreparingDelete,
 *   PreparingUpdate, Updating) are driven on whatever the budget or the OrderedReady order (they count as
 *   unavailable already), except while the rollout is paused; a pod whose reason to change went away (rolled
 *   back, below the partition, OnDelete) and a pod whose in-place update is done go back to service; a
 *   PreparingNormal pod whose preNormal handlers are gone becomes Normal.
 * - `gateLifecycle`: rewrites the plan's pod writes. A delete of a pod preDelete holds becomes the move to
 *   PreparingDelete (or nothing while it waits there); the first in-place step of a pod becomes the move to
 *   PreparingUpdate while inPlaceUpdate holds it, to Updating once it does not; a new pod gets its state label.
 * Without `spec.lifecycle` both leave the plan as it is, except that pods still labelled in a waiting state
 * (a lifecycle removed from the spec) go back to Normal.
 */
import { LifecycleState } from '../../../api/keys.ts';
import type { Lifecycle } from '../../../api/lifecycle.ts';
import type { Pod, Stored } from '../../../kube/types.ts';
import { podIsUpdatingInPlace } from '../../inplace/index.ts';
import type { Action } from '../model/actions.ts';
import { updateAction, type UpdateContext } from '../rollout/inplace-plan.ts';
import { backToService, hookHolds, lifecycleOf, moveTo, withCreationState } from './hooks.ts';
import { lifecycleHolds, lifecycleState } from '../pods/predicates.ts';
import { getPodRevision, isSettledPhase } from '../pods/predicates.ts';
import type { Accumulator, PodSet } from '../pods/pod-set.ts';

const PREPARED = new Set<string>([LifecycleState.preparingDelete, LifecycleState.preparingUpdate, LifecycleState.updating]);

function allPods(set: PodSet): Stored<Pod>[] {
  return [...set.replicas.values(), ...set.condemned];
}

interface Prepared {
  pod: Stored<Pod>;
  ordinal: number;
  lifecycle: Lifecycle;
}

/**
 * One replica in a prepared state: drive it, hold it (paused), or return it to service. Returns whether the
 * rolling update must leave it alone.
 */
function planPreparedReplica(ctx: UpdateContext, acc: Accumulator, { pod, ordinal, lifecycle }: Prepared, paused: boolean): boolean {
  const { set } = ctx;
  const outdated = getPodRevision(pod) !== set.update.metadata.name;
  if (!outdated || !ctx.rolling || ordinal < set.partition) {
    acc.actions.push(backToService(pod, lifecycle, set.now));
    return false;
  }
  if (paused) return true;
  updateAction(ctx, acc, pod, ordinal);
  return true;
}

/** Without `spec.lifecycle`: pods still in a lifecycle state (the hooks were removed from the spec) go back to Normal. */
function releaseAll(set: PodSet, acc: Accumulator): void {
  for (const pod of allPods(set))
    if (lifecycleHolds(pod) && !isSettledPhase(pod) && !podIsUpdatingInPlace(pod)) acc.actions.push(backToService(pod, {}, set.now));
}

/**
 * Drives the pods in a lifecycle state; returns nothing but adds the ordinals the rolling update must leave
 * alone (held or driven here) to `inFlight`.
 */
export function planPrepared(ctx: UpdateContext, acc: Accumulator, paused: boolean, inFlight: Set<number>): void {
  const { set } = ctx;
  const lifecycle = lifecycleOf(set.app);
  if (!lifecycle) return releaseAll(set, acc);
  for (let ordinal = set.end - 1; ordinal >= set.start; ordinal--) {
    const pod = set.replicas.get(ordinal);
    if (!pod || isSettledPhase(pod) || inFlight.has(ordinal) || podIsUpdatingInPlace(pod)) continue;
    const state = lifecycleState(pod);
    if (state === LifecycleState.preparingNormal) {
      if (!hookHolds(lifecycle.preNormal, pod)) acc.actions.push(moveTo(pod, LifecycleState.normal, set.now));
    } else if (state !== undefined && PREPARED.has(state) && planPreparedReplica(ctx, acc, { pod, ordinal, lifecycle }, paused)) {
      inFlight.add(ordinal);
    }
  }
}

/** A delete of a pod preDelete holds: the move to PreparingDelete, or nothing while the pod waits there. */
function gateDelete(lifecycle: Lifecycle, pod: Stored<Pod>, action: Action, now: Date): Action | undefined {
  const hook = lifecycle.preDelete;
  if (!hook || !hookHolds(hook, pod)) return action;
  if (lifecycleState(pod) === LifecycleState.preparingDelete) return undefined;
  return moveTo(pod, LifecycleState.preparingDelete, now, hook.markPodNotReady === true);
}

/** The first in-place step of a pod: PreparingUpdate while inPlaceUpdate holds it (then nothing), else Updating. */
function gateInPlace(lifecycle: Lifecycle, pod: Stored<Pod>, action: Action, now: Date): Action | undefined {
  const state = lifecycleState(pod);
  if (state === LifecycleState.updating || podIsUpdatingInPlace(pod)) return action;
  const hook = lifecycle.inPlaceUpdate;
  if (hook && hookHolds(hook, pod))
    return state === LifecycleState.preparingUpdate ? undefined : moveTo(pod, LifecycleState.preparingUpdate, now, hook.markPodNotReady === true);
  return moveTo(pod, LifecycleState.updating, now);
}

/** The plan's pod writes with the lifecycle hooks in front of them (unchanged without `spec.lifecycle`). */
export function gateLifecycle(set: PodSet, acc: Accumulator): void {
  const lifecycle = lifecycleOf(set.app);
  if (!lifecycle) return;
  const pods = new Map(allPods(set).map((p) => [p.metadata.name, p]));
  const out: Action[] = [];
  for (const action of acc.actions) {
    let gated: Action | undefined = action;
    if (action.kind === 'createPod') gated = { ...action, pod: withCreationState(action.pod, lifecycle, set.now) };
    else if (action.kind === 'deletePod' || action.kind === 'inPlaceStep') {
      const pod = pods.get(action.name);
      if (pod) gated = action.kind === 'deletePod' ? gateDelete(lifecycle, pod, action, set.now) : gateInPlace(lifecycle, pod, action, set.now);
    }
    if (gated) out.push(gated);
  }
  acc.actions = out;
}
