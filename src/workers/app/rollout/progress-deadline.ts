/**
 * The progress deadline (`spec.progressDeadlineSeconds`) as a pure decision. The clock lives in
 * `status.rolloutProgress {revision, updatedAvailableReplicas, lastProgressTime}`:
 *
 * - it runs while a RollingUpdate rollout has pods left to bring to the update revision (under the partition
 *   in force, a canary step's included) and is not paused; progress is the count of updated, available pods
 *   growing past the most seen so far, which restarts the clock, as does a new update revision;
 * - before the deadline the plan waits until it (a timer, not polling);
 * - once exceeded: condition Progressing False, reason ProgressDeadlineExceeded, a Warning Event once, and with
 *   `pauseOnProgressDeadline` the spec is paused (the canary's `pauseRollout` action); with
 *   `rollbackOnProgressDeadline` the rollout is aborted instead (`abort.ts`: pods go back to the stable revision);
 * - while paused the record is dropped, so resuming starts a fresh clock; a condition saying the deadline
 *   was exceeded stays while the rollout stays paused at the same revision.
 */
import type { App } from '../../../api/app.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import { ConditionType, EventReason, Reason } from '../../../api/keys.ts';
import type { RolloutProgress } from '../../../api/progress-deadline.ts';
import type { Stored } from '../../../kube/types.ts';
import type { Wait } from '../../types.ts';
import type { Action } from '../model/actions.ts';
import { findCondition, setCondition } from '../../shared/conditions.ts';
import type { PodSet } from '../pods/pod-set.ts';
import { updatedAvailable } from './update-order.ts';
import { AbortReason, PauseCause, pausedByValue } from '../../../api/rollout-abort.ts';
import type { AbortTrigger } from './abort.ts';

interface DeadlineInput {
  set: PodSet;
  /** The update strategy is RollingUpdate. */
  rolling: boolean;
  /** A rollout is under way: the current and update revisions differ. */
  active: boolean;
  /** Spec paused, or a canary pause step (entered now or in force). */
  paused: boolean;
  /** The canary step, for the pause action (0 without canary). */
  step: number;
}

export interface DeadlineOutcome {
  /** What status.rolloutProgress should say (undefined: absent). */
  record: RolloutProgress | undefined;
  /** The deadline is exceeded: the Progressing message, and whether the rollout is paused because of it. */
  exceeded: { message: string; paused: boolean } | undefined;
  /** The Event (when newly exceeded) and the pause. */
  actions: Action[];
  /** This plan pauses the rollout (no pod is started). */
  pauseSpec: boolean;
  /** Until the deadline. */
  wait: Wait | undefined;
  /** Exceeded with rollbackOnProgressDeadline: the abort this plan starts. */
  rollback?: AbortTrigger | undefined;
}

const NONE: DeadlineOutcome = { record: undefined, exceeded: undefined, actions: [], pauseSpec: false, wait: undefined };

/** How many pods should end up updated and available under the partition in force, and how many are. */
function rolloutGoal(set: PodSet): { wanted: number; have: number } {
  const wanted = Math.max(0, set.end - Math.max(set.start, set.partition));
  const counted = set.rollout.priorityStrategy
    ? updatedAvailable(set, set.minReadySeconds, set.now)
    : updatedAvailable(set, set.minReadySeconds, set.now, set.partition);
  return { wanted, have: Math.min(counted, wanted) };
}

function wasExceeded(app: Stored<App>, revision: string): string | undefined {
  const c = findCondition(app.status?.conditions, ConditionType.progressing);
  return c?.status === 'False' && c.reason === Reason.progressDeadlineExceeded && app.status?.updateRevision === revision ? c.message : undefined;
}

/** The clock after this observation: kept, or restarted now (first look, new revision, or more pods updated and available). */
function nextRecord(prior: RolloutProgress | undefined, revision: string, have: number, now: Date): RolloutProgress {
  if (prior && prior.revision === revision && have <= prior.updatedAvailableReplicas) return prior;
  return { revision, updatedAvailableReplicas: have, lastProgressTime: now.toISOString() };
}

export function progressDeadline(input: DeadlineInput): DeadlineOutcome {
  const { set } = input;
  const app = set.app;
  const seconds = app.spec.progressDeadlineSeconds;
  if (seconds === undefined || !input.rolling || !input.active) return NONE;
  const { wanted, have } = rolloutGoal(set);
  if (have >= wanted) return NONE;
  const revision = set.update.metadata.name;
  const previous = wasExceeded(app, revision);
  const rollbackOn = set.rollout.rollbackOnProgressDeadline;
  // Rolling back wins over pausing: an aborted rollout needs no resume.
  const pauseOn = set.rollout.pauseOnProgressDeadline && !rollbackOn;
  if (input.paused) return previous === undefined ? NONE : { ...NONE, exceeded: { message: previous, paused: pauseOn } };
  const record = nextRecord(app.status?.rolloutProgress, revision, have, set.now);
  const remaining = Date.parse(record.lastProgressTime) + seconds * 1000 - set.now.getTime();
  if (remaining > 0) return { ...NONE, record, wait: { reason: 'progress-deadline', afterMs: remaining } };
  return exceededOutcome(input, { record, previous, pauseOn, rollbackOn, text: `${seconds}s (${have} of ${wanted})` });
}

interface Exceeded {
  record: RolloutProgress;
  previous: string | undefined;
  pauseOn: boolean;
  rollbackOn: boolean;
  text: string;
}

function exceededOutcome(input: DeadlineInput, o: Exceeded): DeadlineOutcome {
  const { record, previous, pauseOn } = o;
  const app = input.set.app;
  const revision = record.revision;
  const message =
    `revision ${revision}: no further pod became updated and available for ${o.text}` +
    (pauseOn ? '; rollout paused: set spec.updateStrategy.rollingUpdate.paused to false to retry' : '') +
    (o.rollbackOn ? '; rollout aborted (rollbackOnProgressDeadline): pods go back to the current revision' : '');
  const actions: Action[] = [];
  if (pauseOn) {
    const pausedBy = pausedByValue(PauseCause.progressDeadline, revision);
    actions.push({ kind: 'pauseRollout', resourceVersion: app.metadata.resourceVersion, step: input.step, pausedBy });
  }
  if (previous === undefined) {
    actions.push({
      kind: 'event',
      event: { type: 'Warning', reason: EventReason.progressDeadlineExceeded, action: pauseOn ? 'Pause' : o.rollbackOn ? 'Abort' : 'Rollout', message },
    });
  }
  const rollback = o.rollbackOn ? { reason: AbortReason.progressDeadline, message } : undefined;
  // Pausing drops the clock now, so a resume (even one before the next reconcile) starts a fresh one.
  return {
    record: pauseOn ? undefined : record,
    exceeded: { message: previous ?? message, paused: pauseOn },
    actions,
    pauseSpec: pauseOn,
    wait: undefined,
    rollback,
  };
}

/** `status` with rolloutProgress and, when the deadline is exceeded, Progressing False (and Paused True when it paused the rollout). */
export function withDeadlineStatus(status: AppStatus, outcome: DeadlineOutcome, now: Date, generation: number | undefined): AppStatus {
  const { rolloutProgress: _previous, ...rest } = status;
  let conditions = status.conditions;
  const exceeded = outcome.exceeded;
  if (exceeded) {
    const reason = Reason.progressDeadlineExceeded;
    conditions = setCondition(conditions, { type: ConditionType.progressing, status: 'False', reason, message: exceeded.message }, now, generation);
    if (exceeded.paused) {
      const message = 'paused by the progress deadline (pauseOnProgressDeadline); set spec.updateStrategy.rollingUpdate.paused to false to retry';
      conditions = setCondition(conditions, { type: ConditionType.paused, status: 'True', reason, message }, now, generation);
    }
  }
  return { ...rest, ...(outcome.record ? { rolloutProgress: outcome.record } : {}), ...(conditions ? { conditions } : {}) };
}
