/**
 * Aborting a rollout as a pure decision (docs/architecture.md). An abort is not a second controller: while one
 * is in force the plan's target revision is the stable one (`status.currentRevision`), so the rolling update
 * moves every pod of the update revision back — in place where the update policy allows, else recreated —
 * under maxUnavailable, the ordering rules and the lifecycle hooks, exactly as it would move them forward.
 * `spec.template` is never written; the abort lives in `status.abort`.
 *
 * - Starts: an abort request naming the update revision (annotation `rollout.apps.ebb.dev/abort`), or a
 *   trigger the worker found (the progress deadline with rollbackOnProgressDeadline; an analysis later).
 * - Ends: a new update revision, or a retry (annotation `rollout.apps.ebb.dev/retry` naming the abort's
 *   `abortedAt`; a requested abort also ends when its annotation is removed). Canary steps then start again.
 * - While aborted: canary progress is frozen as it was, no progress deadline runs, and every pause ebb set
 *   itself (annotation `paused-by`: a canary step, an analysis, the progress deadline) is lifted (once: the
 *   rollback needs no person to resume it); a pause a person set holds the rollback.
 */
import type { App } from '../../../api/app.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import { ConditionType, EventReason, Reason } from '../../../api/keys.ts';
import { AbortReason, parsePausedBy, RolloutAnnotation, type AbortMeasurement, type AbortStatus } from '../../../api/rollout-abort.ts';
import type { Stored } from '../../../kube/types.ts';
import type { Action } from '../model/actions.ts';
import { findCondition, setCondition } from '../../shared/conditions.ts';
import { rolloutSettings } from '../model/rollout-settings.ts';

/** What aborts a rollout besides a person: the progress deadline now, a failed analysis later. */
export interface AbortTrigger {
  reason: AbortReason;
  message: string;
  measurement?: AbortMeasurement | undefined;
}

export type AbortEnd = 'retried' | 'newRevision';

export interface AbortState {
  /** The abort in force after this plan, or undefined. */
  abort: AbortStatus | undefined;
  /** It starts in this plan. */
  started: boolean;
  /** An abort recorded in status ended in this plan, and why. */
  ended: AbortEnd | undefined;
  /** An abort that would have started in this plan was refused, and why (see abort-refusal). */
  refused?: string | undefined;
}

/** Whether the recorded abort was retried: its `abortedAt` named by the retry annotation, or a request withdrawn. */
function retried(prior: AbortStatus, annotations: Readonly<Record<string, string>>): boolean {
  if (annotations[RolloutAnnotation.retry] === prior.abortedAt) return true;
  return prior.reason === AbortReason.requested && annotations[RolloutAnnotation.abort] !== prior.revision;
}

/**
 * The abort in force for a rollout from `current` to `update`, from the App's status and annotations and the
 * triggers found in this plan (at most the first is used).
 */
export function abortState(app: Stored<App>, revisions: { current: string; update: string }, now: Date, triggers: readonly AbortTrigger[] = []): AbortState {
  const prior = app.status?.abort;
  const annotations = app.metadata.annotations ?? {};
  let ended: AbortEnd | undefined;
  if (prior) {
    if (prior.revision !== revisions.update) ended = 'newRevision';
    else if (retried(prior, annotations)) ended = 'retried';
    else return { abort: prior, started: false, ended: undefined };
  }
  if (revisions.current === revisions.update) return { abort: undefined, started: false, ended };
  const abortedAt = now.toISOString();
  if (annotations[RolloutAnnotation.abort] === revisions.update && ended !== 'retried') {
    const message = `abort requested (annotation ${RolloutAnnotation.abort})`;
    return { abort: { revision: revisions.update, reason: AbortReason.requested, message, abortedAt }, started: true, ended };
  }
  const trigger = triggers[0];
  if (!trigger) return { abort: undefined, started: false, ended };
  const abort: AbortStatus = { revision: revisions.update, reason: trigger.reason, message: trigger.message, abortedAt };
  if (trigger.measurement) abort.measurement = trigger.measurement;
  return { abort, started: true, ended };
}

/**
 * The pause in force is ebb's own: `rollingUpdate.paused` is set and annotation `paused-by` says ebb set it
 * (a canary step, an analysis, the progress deadline: written in the same patch as the pause). A person's
 * pause (`paused: true` written by hand or by `ebb rollout pause`, which removes the annotation) is not.
 */
export function pausedByEbb(app: Stored<App>): boolean {
  return rolloutSettings(app).paused && parsePausedBy(app.metadata.annotations?.[RolloutAnnotation.pausedBy]) !== undefined;
}

/**
 * The writes of an aborted plan: the Events of an abort starting or ending, and the lifting of every pause ebb
 * set itself. `lifting`: the plan still moves no pod (the pause is lifted by this very plan).
 */
export function abortActions(app: Stored<App>, state: AbortState, current: string): { actions: Action[]; lifting: boolean } {
  const actions: Action[] = [];
  const abort = state.abort;
  if (state.ended === 'retried') {
    const message = `abort of revision ${app.status?.abort?.revision ?? ''} retried: the rollout starts again from its first step`;
    actions.push({ kind: 'event', event: { type: 'Normal', reason: EventReason.rolloutRetried, action: 'Retry', message } });
  }
  if (!abort) return { actions, lifting: false };
  if (state.started) {
    const message = `rollout of revision ${abort.revision} aborted (${abort.reason}): ${abort.message}; pods go back to revision ${current}`;
    actions.push({ kind: 'event', event: { type: 'Warning', reason: EventReason.rolloutAborted, action: 'Abort', message } });
  }
  const lifting = pausedByEbb(app);
  const step = app.status?.canary?.step ?? 0;
  if (lifting) actions.push({ kind: 'pauseRollout', resourceVersion: app.metadata.resourceVersion, step, paused: false, pausedBy: null });
  return { actions, lifting };
}

/** The Progressing condition's words while aborted: pods `left` still to go back to `current`. */
export function rollingBackProgress(abort: AbortStatus, current: string, left: number): { reason: string; status: 'True' | 'False'; message: string } {
  const why = `rollout of revision ${abort.revision} aborted (${abort.reason})`;
  if (left > 0)
    return { status: 'True', reason: Reason.rollingBack, message: `${why}: ${left} pod${left === 1 ? '' : 's'} still to go back to revision ${current}` };
  return { status: 'False', reason: Reason.rolloutAborted, message: `${why}: every pod is back at revision ${current}` };
}

/** `status` with `abort` and the Aborted condition (True while aborted; False once an abort ended). */
export function withAbortStatus(status: AppStatus, state: AbortState, now: Date, generation: number | undefined): AppStatus {
  const { abort: _previous, ...rest } = status;
  const abort = state.abort;
  let conditions = status.conditions;
  if (!abort && state.refused) {
    conditions = setCondition(
      conditions,
      { type: ConditionType.aborted, status: 'False', reason: Reason.abortRefused, message: state.refused },
      now,
      generation,
    );
  } else if (abort) {
    const measured = abort.measurement ? ` (${abort.measurement.analysis}: ${abort.measurement.value ?? '?'}, ${abort.measurement.condition ?? ''})` : '';
    const message = `rollout of revision ${abort.revision} aborted: ${abort.message}${measured}`;
    conditions = setCondition(conditions, { type: ConditionType.aborted, status: 'True', reason: abort.reason, message }, now, generation);
  } else if (findCondition(conditions, ConditionType.aborted)?.status === 'True') {
    const reason = state.ended === 'retried' ? Reason.abortRetried : Reason.newUpdateRevision;
    const message = state.ended === 'retried' ? 'the abort was retried' : 'a new update revision ended the abort';
    conditions = setCondition(conditions, { type: ConditionType.aborted, status: 'False', reason, message }, now, generation);
  }
  return { ...rest, ...(abort ? { abort } : {}), ...(conditions ? { conditions } : {}) };
}
