/**
 * In-place updates in the App plan (docs/architecture.md), pure like the rest of the planner. Each reconcile
 * gives every pod one step at most, computed from the pod as read (`nextInPlaceStep`) and performed by the
 * executor (`applyInPlaceStep`); the pod's watch event brings the next reconcile, a `wait` step becomes the
 * plan's timer. Three parts:
 * - in flight: a pod whose in-place update has started (state annotation, or gate False with reason
 *   StartInPlaceUpdate) is driven to done whatever the budget, the policy, pause or partition — it is
 *   unavailable already. Towards the update revision while it may still be updated; otherwise back to (or on
 *   to) the revision its label names, which finishes or undoes what was started.
 * - gates: a pod with readiness gate InPlaceUpdateReady never set (its creator died before setting it) gets it.
 * - the rolling update asks `updateAction` how to move an outdated pod: recreate, an in-place step, or
 *   nothing (InPlaceOnly refused).
 */
import {
  decideUpdateMethod,
  EMPTY_PLAN,
  fallbackTexts,
  GRACE_PERIOD_WAIT,
  needsGateReady,
  nextInPlaceStep,
  podIsUpdatingInPlace,
  readState,
  refusalReason,
  refusedResize,
  resizeRefusal,
  resizeRefusedTexts,
  stepWait,
  UpdatePolicy,
  type FallbackTexts,
  type InPlacePlan,
  type InPlaceStep,
  type UpdateDecision,
} from '../../inplace/index.ts';
import type { Action } from '../model/actions.ts';
import type { ControllerRevision, Pod, Stored } from '../../../kube/types.ts';
import { getPodRevision, isSettledPhase, isTerminating } from '../pods/predicates.ts';
import type { Accumulator, PodSet } from '../pods/pod-set.ts';
import { templateOf } from '../revisions/revisions.ts';
import { deletePod } from '../pods/delete-pod.ts';
import { replacementFor } from './replacement.ts';
import { mayRunUpdate } from './update-order.ts';

export interface UpdateContext {
  set: PodSet;
  /** RollingUpdate (not OnDelete). */
  rolling: boolean;
  gracePeriodSeconds: number;
  /** How a pod of revision `from` moves to the update revision (one diff per revision, not per pod). */
  decide(from: string | undefined): UpdateDecision;
}

export function updateContext(set: PodSet, revisions: readonly Stored<ControllerRevision>[]): UpdateContext {
  const to = templateOf(set.update) ?? set.app.spec.template;
  const memo = new Map<string | undefined, UpdateDecision>();
  return {
    set,
    rolling: set.rollout.rolling,
    gracePeriodSeconds: set.rollout.inPlaceGracePeriodSeconds,
    decide: (from) => {
      let decision = memo.get(from);
      if (!decision) {
        const revision = revisions.find((r) => r.metadata.name === from);
        decision = decideUpdateMethod({
          fromRevision: from,
          from: revision ? templateOf(revision) : undefined,
          to,
          podUpdatePolicy: set.rollout.podUpdatePolicy,
        });
        memo.set(from, decision);
      }
      return decision;
    },
  };
}

const updateRevision = (ctx: UpdateContext): string => ctx.set.update.metadata.name;

interface Replica {
  pod: Stored<Pod>;
  ordinal: number;
  /** A resize the kubelet refuses may be recreated (default true). */
  mayRecreate?: boolean;
}

/**
 * The next in-place step of the pod towards `revision` by `plan`: an action when it writes, a timer when it
 * waits. A resize the kubelet refused is recreated when `mayRecreate` and the policy allows it
 * (`refused-resize.ts`); otherwise the pod is held as it is. Returns false when it was held (nothing planned).
 */
function inPlaceStep(ctx: UpdateContext, acc: Accumulator, { pod, ordinal, mayRecreate = true }: Replica, revision: string, plan: InPlacePlan): boolean {
  const step = nextInPlaceStep(pod, { revision, plan, gracePeriodSeconds: ctx.gracePeriodSeconds }, ctx.set.now);
  if (step.kind === 'resizeRefused') {
    if (!mayRecreate || ctx.set.rollout.podUpdatePolicy !== UpdatePolicy.inPlaceIfPossible) return false;
    acc.actions.push(recreateRefused(ctx, pod, ordinal, step));
    return true;
  }
  const wait = stepWait(step);
  if (wait) acc.waits.push(wait);
  else if (step.kind !== 'done') acc.actions.push({ kind: 'inPlaceStep', name: pod.metadata.name, uid: pod.metadata.uid, ordinal, revision, pod, step });
  // Starting with a grace period: the timer for its end is set now (the start's own watch event may come first).
  if (step.kind === 'start' && ctx.gracePeriodSeconds > 0)
    acc.waits.push({
      reason: GRACE_PERIOD_WAIT,
      afterMs: Math.max(0, Date.parse(step.state.startedAt) + ctx.gracePeriodSeconds * 1000 - ctx.set.now.getTime()),
    });
  return true;
}

function withFallback(action: Action, texts: FallbackTexts | undefined): Action {
  return texts && action.kind === 'deletePod' ? { ...action, fallback: { event: texts.event, log: texts.log } } : action;
}

/** Delete for recreation; a fallback from in place carries its Event and log line. */
function recreate(ctx: UpdateContext, pod: Stored<Pod>, ordinal: number, decision: UpdateDecision): Action {
  const action = deletePod(pod, ordinal, 'update', replacementFor(ctx.set, ordinal));
  return withFallback(action, fallbackTexts(decision, { name: pod.metadata.name, uid: pod.metadata.uid }, updateRevision(ctx)));
}

/** Delete a pod whose resize the kubelet refused, for recreation with the update revision's resources. */
function recreateRefused(ctx: UpdateContext, pod: Stored<Pod>, ordinal: number, step: Extract<InPlaceStep, { kind: 'resizeRefused' }>): Action {
  const why = refusalReason(pod, step.container, step.message);
  const texts = resizeRefusedTexts({ name: pod.metadata.name, uid: pod.metadata.uid }, updateRevision(ctx), why, UpdatePolicy.inPlaceIfPossible);
  return withFallback(deletePod(pod, ordinal, 'update', replacementFor(ctx.set, ordinal)), texts);
}

/**
 * How to move outdated `pod` now: recreate, one in-place step, or nothing when InPlaceOnly refuses (the
 * change, or the kubelet the pod's resize). Returns false when nothing was planned (refused), so the caller
 * does not spend budget on it.
 */
export function updateAction(ctx: UpdateContext, acc: Accumulator, pod: Stored<Pod>, ordinal: number): boolean {
  const decision = ctx.decide(getPodRevision(pod));
  if (decision.mode === 'refuse') return false;
  if (decision.mode === 'recreate') acc.actions.push(recreate(ctx, pod, ordinal, decision));
  else return inPlaceStep(ctx, acc, { pod, ordinal }, updateRevision(ctx), decision.plan);
  return true;
}

/** A pod whose in-place update has started: its next step, towards the update revision when it may go there. */
function driveInFlight(ctx: UpdateContext, acc: Accumulator, pod: Stored<Pod>, ordinal: number, paused: boolean): void {
  const label = getPodRevision(pod);
  const update = updateRevision(ctx);
  // Paused: an update to the update revision that has started completes; none is started or redirected.
  const mayUpdate = ctx.rolling && mayRunUpdate(ctx.set, ordinal) && (!paused || readState(pod)?.revision === update);
  if (label === undefined || label === update || !mayUpdate) {
    inPlaceStep(ctx, acc, { pod, ordinal, mayRecreate: !paused && label === update }, label ?? update, EMPTY_PLAN);
    return;
  }
  const decision = ctx.decide(label);
  if (decision.mode === 'inPlace') inPlaceStep(ctx, acc, { pod, ordinal, mayRecreate: !paused }, update, decision.plan);
  // Unavailable already, so recreating it spends no budget; paused never deletes.
  else if (decision.mode === 'recreate' && !paused) acc.actions.push(recreate(ctx, pod, ordinal, decision));
  else inPlaceStep(ctx, acc, { pod, ordinal }, label, EMPTY_PLAN);
}

/**
 * Pods in flight get their next step and pods with an unset gate get it set, whatever blocks the rest of the
 * plan. Returns the ordinals of pods in flight (the rolling update leaves them alone).
 */
export function planInFlight(ctx: UpdateContext, acc: Accumulator, paused: boolean): Set<number> {
  const inFlight = new Set<number>();
  for (const ordinal of [...ctx.set.ordinals].reverse()) {
    const pod = ctx.set.replicas.get(ordinal);
    if (!pod || isSettledPhase(pod)) continue;
    if (podIsUpdatingInPlace(pod)) {
      inFlight.add(ordinal);
      driveInFlight(ctx, acc, pod, ordinal, paused);
    } else if (needsGateReady(pod)) {
      acc.actions.push({ kind: 'markGateReady', name: pod.metadata.name, uid: pod.metadata.uid, pod });
    }
  }
  return inFlight;
}

/** Outdated pods that may be updated (partition, priority; RollingUpdate) the policy cannot update in place, highest first. */
export function collectFallbacks(ctx: UpdateContext, acc: Accumulator): void {
  const { set } = ctx;
  acc.fallbacks = [];
  if (!ctx.rolling) return;
  for (const ordinal of [...set.ordinals].reverse()) {
    const pod = set.replicas.get(ordinal);
    if (!pod || isTerminating(pod) || getPodRevision(pod) === updateRevision(ctx) || !mayRunUpdate(set, ordinal)) continue;
    const texts = fallbackTexts(ctx.decide(getPodRevision(pod)), { name: pod.metadata.name, uid: pod.metadata.uid }, updateRevision(ctx));
    if (texts) acc.fallbacks.push(texts);
    else if (ctx.set.rollout.podUpdatePolicy === UpdatePolicy.inPlaceOnly) holdRefused(ctx, acc, pod);
  }
}

/**
 * InPlaceOnly and the kubelet refused the pod's resize: the pod is held at its revision and reported
 * (InPlaceFallback reason ResizeRefused); the Event goes out when the condition is new or says something else.
 */
function holdRefused(ctx: UpdateContext, acc: Accumulator, pod: Stored<Pod>): void {
  // A pod in flight restarts its containers after the resize; a new instance starts at the new resources.
  if (resizeRefusal(pod) === undefined || podIsUpdatingInPlace(pod)) return;
  const decision = ctx.decide(getPodRevision(pod));
  const refusal = decision.mode === 'inPlace' ? refusedResize(pod, decision.plan) : undefined;
  if (!refusal) return;
  const why = refusalReason(pod, refusal.container, refusal.message);
  const texts = resizeRefusedTexts({ name: pod.metadata.name, uid: pod.metadata.uid }, updateRevision(ctx), why, UpdatePolicy.inPlaceOnly);
  const first = (acc.fallbacks ?? []).length === 0;
  (acc.fallbacks ??= []).push(texts);
  const previous = ctx.set.app.status?.conditions?.find((c) => c.type === texts.condition.type);
  const reported = previous?.status === 'True' && previous.reason === texts.condition.reason && previous.message === texts.condition.message;
  if (first && !reported) acc.actions.push({ kind: 'event', event: texts.event, log: texts.log });
}
