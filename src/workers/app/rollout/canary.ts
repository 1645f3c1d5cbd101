/**
 * Canary steps as a pure state machine. Progress lives in `status.canary {step, pausedAt}` next to
 * `status.updateRevision`; a new update revision restarts at step 0.
 *
 * - `{replicas: n|%}`: at most that many pods (counted from the highest ordinal) may run the update revision;
 *   the step is done when all of them do and are available.
 * - `{pause: {}}`: on entry sets `rollingUpdate.paused: true` on the spec and records `pausedAt`; the step is
 *   done when a person sets `paused: false` again.
 * - `{pause: {duration}}`: done `duration` after `pausedAt` (the reconcile returns a wait until then).
 * - `{analysis: [...]}`: its checks measure (`analysis/book.ts`); done when all passed. A failed check holds the
 *   step (the planner aborts the rollout); an inconclusive one pauses like `pause: {}`, and resuming measures it
 *   again (the step is passed only by its checks, or by `ebb rollout promote`).
 */
import type { CanaryStatus } from '../../../api/app-status.ts';
import { parseDuration } from '../../../common/duration.ts';
import { canaryReplicasOf } from '../../../api/int-or-percent.ts';
import type { CanaryStep } from '../../../api/update-strategy.ts';
import type { StepVerdict } from './analysis/book.ts';

export interface CanaryInput {
  steps: readonly CanaryStep[];
  replicas: number;
  /** A rollout is under way (the current and update revisions differ). */
  active: boolean;
  /** status.canary belongs to the update revision (status.updateRevision is it). */
  sameRevision: boolean;
  status: CanaryStatus | undefined;
  specPaused: boolean;
  now: Date;
  /** `ebb rollout promote` asked to skip the remaining steps of this revision's rollout. */
  promoted?: boolean | undefined;
  /** Whether the `target` highest-ordinal pods (within the partition) all run the update revision and are available. */
  reached(target: number): boolean;
  /** Whether `target` pods (within the partition) run the update revision, available or not. */
  updated?: ((target: number) => boolean) | undefined;
  /**
   * Advances the checks an analysis step names; without it an analysis step passes. `resumed`: a person resumed
   * the pause the step's inconclusive checks caused.
   */
  analyze?: ((step: number, checks: readonly string[], early?: boolean, resumed?: boolean) => StepVerdict) | undefined;
}

export type CanaryPause = 'manual' | 'timed';

export interface CanaryOutcome {
  /** What status.canary should say (undefined when there are no steps). */
  status: CanaryStatus | undefined;
  /** How many pods may run the update revision now; undefined = all (no canary limit). */
  target: number | undefined;
  /** The current step is a pause. */
  pause?: CanaryPause | undefined;
  /** Entered a `pause: {}` step now: set spec paused (when not already) and record an Event. */
  enteredManualPause: boolean;
  pauseSpec: boolean;
  /** Until a timed pause ends. */
  waitMs?: number | undefined;
  /** The current step is an analysis whose checks are measuring, or one of which failed. */
  analysis?: 'running' | 'failed' | undefined;
}

const stepTarget = (step: CanaryStep, replicas: number): number => {
  const r = canaryReplicasOf(step.replicas ?? 0, replicas);
  return r.ok ? r.value : replicas;
};

interface Cursor {
  step: number;
  pausedAt: string | undefined;
  target: number;
}

function startCursor(input: CanaryInput): Cursor {
  const keep = input.sameRevision && input.status?.step !== undefined;
  const step = keep ? Math.min(input.status?.step ?? 0, input.steps.length) : 0;
  // The target in force at `step`: that of the last replicas step before it.
  let target = 0;
  for (const s of input.steps.slice(0, step)) if (s.replicas !== undefined) target = stepTarget(s, input.replicas);
  return { step, pausedAt: keep ? input.status?.pausedAt : undefined, target };
}

type StepResult = { next: true } | { next: false; outcome: CanaryOutcome };

function manualPause(input: CanaryInput, c: Cursor): StepResult {
  const status = (pausedAt: string): CanaryStatus => ({ step: c.step, pausedAt });
  if (c.pausedAt === undefined) {
    const pausedAt = input.now.toISOString();
    return { next: false, outcome: { status: status(pausedAt), target: c.target, pause: 'manual', enteredManualPause: true, pauseSpec: !input.specPaused } };
  }
  if (input.specPaused)
    return { next: false, outcome: { status: status(c.pausedAt), target: c.target, pause: 'manual', enteredManualPause: false, pauseSpec: false } };
  return { next: true };
}

function timedPause(input: CanaryInput, c: Cursor, durationMs: number): StepResult {
  const pausedAt = c.pausedAt ?? input.now.toISOString();
  const remaining = Date.parse(pausedAt) + durationMs - input.now.getTime();
  if (remaining <= 0) return { next: true };
  return {
    next: false,
    outcome: { status: { step: c.step, pausedAt }, target: c.target, pause: 'timed', enteredManualPause: false, pauseSpec: false, waitMs: remaining },
  };
}

function analysisStep(input: CanaryInput, c: Cursor, checks: readonly string[]): StepResult {
  // A person resumed the pause of an inconclusive check: it measures again (a new pause if it is inconclusive again).
  const resumed = c.pausedAt !== undefined && !input.specPaused;
  if (resumed) c.pausedAt = undefined;
  const verdict = input.analyze?.(c.step, checks, false, resumed) ?? 'passed';
  if (verdict === 'passed') return { next: true };
  if (verdict === 'inconclusive') return manualPause(input, c);
  return { next: false, outcome: { status: { step: c.step }, target: c.target, enteredManualPause: false, pauseSpec: false, analysis: verdict } };
}

/**
 * An analysis step right after a replicas step starts as soon as that step's pods run the update revision,
 * available or not: a canary that never becomes ready is judged instead of waited on. Only a failure acts
 * before the replicas step is done (the rollout is aborted); the step's record goes on from there.
 */
function earlyAnalysis(input: CanaryInput, c: Cursor): StepResult | undefined {
  const next = input.steps[c.step + 1];
  if (next?.analysis === undefined || input.analyze === undefined || input.updated?.(c.target) !== true) return undefined;
  if (input.analyze(c.step + 1, next.analysis, true) !== 'failed') return undefined;
  return { next: false, outcome: { status: { step: c.step }, target: c.target, enteredManualPause: false, pauseSpec: false, analysis: 'failed' } };
}

function runStep(input: CanaryInput, c: Cursor, step: CanaryStep): StepResult {
  if (step.replicas !== undefined) {
    c.target = stepTarget(step, input.replicas);
    if (input.reached(c.target)) return { next: true };
    const early = earlyAnalysis(input, c);
    if (early) return early;
    return { next: false, outcome: { status: { step: c.step }, target: c.target, enteredManualPause: false, pauseSpec: false } };
  }
  if (step.analysis !== undefined) return analysisStep(input, c, step.analysis);
  const duration = step.pause?.duration;
  if (duration === undefined) return manualPause(input, c);
  return timedPause(input, c, parseDuration(duration) ?? 0);
}

export function canaryProgress(input: CanaryInput): CanaryOutcome {
  const n = input.steps.length;
  if (n === 0) return { status: undefined, target: undefined, enteredManualPause: false, pauseSpec: false };
  const done: CanaryOutcome = { status: { step: n }, target: undefined, enteredManualPause: false, pauseSpec: false };
  if (!input.active || input.promoted === true) return done;
  const c = startCursor(input);
  while (c.step < n) {
    const step = input.steps[c.step];
    if (!step) break;
    const r = runStep(input, c, step);
    if (!r.next) return r.outcome;
    c.step++;
    c.pausedAt = undefined;
  }
  return done;
}
