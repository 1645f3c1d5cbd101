/**
 * One analysis check as a pure state machine over `status.analysis.runs[]`: the first measurement is due
 * `initialDelay` after the check starts (at once by default), then every `interval` (the reconcile returns a
 * wait until the next one, so measurements happen on timers and need no worker between them). A measurement is
 * taken at most once per due time: a reconcile before it is due only reports the wait.
 *
 * After each measurement: more than `failureLimit` failed → Failed; more than `consecutiveErrorLimit` errors in
 * a row → Error; more than `inconclusiveLimit` inconclusive → Inconclusive; `count` measurements taken (errors
 * are not measurements taken) → Successful; else Running until the next one, which after an error comes sooner
 * (`ERROR_RETRY_MS`, or the interval if shorter). A check that ended stays as it ended, unless a person resumed
 * the pause an inconclusive one caused (`restartRun`). Before its step is reached, only failures count (`early`).
 */
import {
  AnalysisPhase,
  DEFAULT_ANALYSIS_INTERVAL,
  DEFAULT_CONSECUTIVE_ERROR_LIMIT,
  MAX_MEASUREMENT_HISTORY,
  MeasurementPhase,
  type AnalysisCheck,
  type AnalysisRun,
  type Measurement,
} from '../../../../api/analysis.ts';
import { parseDuration } from '../../../../common/duration.ts';

export interface RunInput {
  check: AnalysisCheck;
  /** The canary step the check belongs to; undefined for a background check. */
  step: number | undefined;
  prior: AnalysisRun | undefined;
  now: Date;
  /**
   * Before the step is reached (its replicas step still waits on its pods): only a failed measurement counts;
   * others are kept in the history and the check goes on measuring.
   */
  early?: boolean | undefined;
  /** Takes one measurement (called only when one is due). */
  measure(): Measurement;
}

export interface RunOutcome {
  run: AnalysisRun;
  /** The measurement taken in this plan, if one was due. */
  measured: Measurement | undefined;
  /** Until the next measurement, while Running. */
  waitMs: number | undefined;
}

/** After an error, the next measurement comes this soon (as Argo Rollouts' error retry), or at the interval if shorter. */
export const ERROR_RETRY_MS = 10_000;

export const intervalMs = (check: AnalysisCheck): number => Math.max(1000, parseDuration(check.interval ?? DEFAULT_ANALYSIS_INTERVAL) ?? 30_000);

/** Time from the start of the check to its first measurement. */
export const initialDelayMs = (check: AnalysisCheck): number => (check.initialDelay === undefined ? 0 : Math.max(0, parseDuration(check.initialDelay) ?? 0));

/** Measurements the check takes before it passes: `count`, by default 1 in a step and unbounded in the background. */
export const countOf = (check: AnalysisCheck, step: number | undefined): number | undefined => check.count ?? (step === undefined ? undefined : 1);

const ended = (run: AnalysisRun): boolean => run.phase !== AnalysisPhase.running;

function judged(run: AnalysisRun, check: AnalysisCheck, step: number | undefined): AnalysisRun['phase'] {
  if (run.failed > (check.failureLimit ?? 0)) return AnalysisPhase.failed;
  if ((run.consecutiveErrors ?? 0) > (check.consecutiveErrorLimit ?? DEFAULT_CONSECUTIVE_ERROR_LIMIT)) return AnalysisPhase.error;
  if (run.inconclusive > (check.inconclusiveLimit ?? 0)) return AnalysisPhase.inconclusive;
  const count = countOf(check, step);
  if (count !== undefined && run.successful + run.failed + run.inconclusive >= count) return AnalysisPhase.successful;
  return AnalysisPhase.running;
}

/** `run` with `m` in its history and, unless it is an early measurement that did not fail, in its counts. */
function withMeasurement(run: AnalysisRun, m: Measurement, early: boolean): AnalysisRun {
  const { nextMeasurementAt: _next, ...rest } = run;
  const counts = !early || m.phase === MeasurementPhase.failed;
  const add = (phase: Measurement['phase']): number => (counts && m.phase === phase ? 1 : 0);
  const error = add(MeasurementPhase.error);
  return {
    ...rest,
    successful: run.successful + add(MeasurementPhase.successful),
    failed: run.failed + add(MeasurementPhase.failed),
    inconclusive: run.inconclusive + add(MeasurementPhase.inconclusive),
    errors: (run.errors ?? 0) + error,
    // A measurement that was taken (whatever it said) ends a streak of errors; an early one changes nothing.
    consecutiveErrors: error === 1 ? (run.consecutiveErrors ?? 0) + 1 : counts ? 0 : (run.consecutiveErrors ?? 0),
    measurements: [...run.measurements, m].slice(-MAX_MEASUREMENT_HISTORY),
  };
}

/** A check's run before its first measurement, due `initialDelay` from now. */
export function freshRun(check: AnalysisCheck, step: number | undefined, now: Date): AnalysisRun {
  const delay = initialDelayMs(check);
  return {
    name: check.name,
    ...(step === undefined ? {} : { step }),
    ...(check.dryRun === true ? { dryRun: true } : {}),
    phase: AnalysisPhase.running,
    startedAt: now.toISOString(),
    ...(delay > 0 ? { nextMeasurementAt: new Date(now.getTime() + delay).toISOString() } : {}),
    successful: 0,
    failed: 0,
    inconclusive: 0,
    errors: 0,
    consecutiveErrors: 0,
    measurements: [],
  };
}

/**
 * The run of a check measuring again after a person resumed the pause it caused: counts start over and the
 * next measurement is due at once; the history stays.
 */
export function restartRun(run: AnalysisRun, now: Date): AnalysisRun {
  const { nextMeasurementAt: _next, ...rest } = run;
  return { ...rest, phase: AnalysisPhase.running, startedAt: now.toISOString(), successful: 0, failed: 0, inconclusive: 0, errors: 0, consecutiveErrors: 0 };
}

export function advanceRun(input: RunInput): RunOutcome {
  const { check, step, now } = input;
  const prior = input.prior ?? (initialDelayMs(check) > 0 ? freshRun(check, step, now) : undefined);
  if (prior && ended(prior)) return { run: prior, measured: undefined, waitMs: undefined };
  const due = prior?.nextMeasurementAt === undefined ? now.getTime() : Date.parse(prior.nextMeasurementAt);
  if (prior && due > now.getTime()) return { run: prior, measured: undefined, waitMs: due - now.getTime() };
  const m = input.measure();
  const base: AnalysisRun = prior ?? freshRun(check, step, now);
  const counted = withMeasurement(base, m, input.early === true);
  const phase = judged(counted, check, step);
  if (phase !== AnalysisPhase.running) return { run: { ...counted, phase }, measured: m, waitMs: undefined };
  const every = m.phase === MeasurementPhase.error ? Math.min(ERROR_RETRY_MS, intervalMs(check)) : intervalMs(check);
  return { run: { ...counted, phase, nextMeasurementAt: new Date(now.getTime() + every).toISOString() }, measured: m, waitMs: every };
}
