/**
 * The analysis of one plan: the checks of the canary step in force and the background checks, advanced on
 * one record (`status.analysis`) that belongs to the update revision. Pure: the planner creates a book,
 * the canary and the background ask it for verdicts, and the plan takes its status, Events, waits and the
 * abort trigger of a failed check.
 *
 * - The record starts empty for a new update revision, and again when an abort is retried.
 * - A failed check, or one that ended in errors, aborts the rollout (reason AnalysisFailed, with its last
 *   measurement); an inconclusive one pauses it (a step's: like a `pause: {}` step; a background one:
 *   `rollingUpdate.paused` set once). Resuming (`paused: false`) measures such a check again from a fresh
 *   count: the gate stays.
 * - A dry-run check measures and is recorded like any other, and never acts: a step waits for it to end and
 *   then counts it as passed; it never fails, pauses or aborts anything.
 * - Every failed, inconclusive or error measurement is a Warning Event.
 */
import {
  AnalysisPhase,
  DEFAULT_CONSECUTIVE_ERROR_LIMIT,
  MeasurementPhase,
  type AnalysisCheck,
  type AnalysisRun,
  type AnalysisStatus,
  type Measurement,
} from '../../../../api/analysis.ts';
import { EventReason } from '../../../../api/keys.ts';
import { AbortReason } from '../../../../api/rollout-abort.ts';
import type { Pod, Stored } from '../../../../kube/types.ts';
import type { Wait } from '../../../types.ts';
import type { Action } from '../../model/actions.ts';
import type { AbortTrigger } from '../abort.ts';
import { measurePodHealth } from './pod-health.ts';
import { advanceRun, freshRun, initialDelayMs, restartRun, type RunOutcome } from './run.ts';
import type { MeasureRequest, QueryVariables } from '../../model/analysis-io.ts';
import type { ResolvedCheck } from '../../model/analysis-io.ts';

export type StepVerdict = 'running' | 'passed' | 'failed' | 'inconclusive';

/** A measurement asked for and not finished is looked for again after this long (a lost one is asked for again). */
export const MEASUREMENT_PENDING_WAIT_MS = 5_000;
/** A run recorded in this plan asks for its first measurement after this long. */
const RUN_RECORDED_WAIT_MS = 1_000;

export interface AnalysisBook {
  /**
   * Advances the checks canary step `step` names; their combined verdict. `early`: the step is not reached yet.
   * `resumed`: a person resumed the pause the step's inconclusive checks caused; they measure again.
   */
  step(step: number, names: readonly string[], early?: boolean, resumed?: boolean): StepVerdict;
  /** Advances the background checks (by name); their combined verdict. `resumed`: the rollout is not paused, so inconclusive ones measure again. */
  background(names: readonly string[], resumed?: boolean): StepVerdict;
  /** What status.analysis says after this plan (undefined: as before). */
  status(): AnalysisStatus | undefined;
  /** Warning Events of the measurements taken in this plan. */
  events(): Action[];
  /** Until the next measurement due. */
  wait(): Wait | undefined;
  /** The first check found failed in this plan, as an abort trigger. */
  failure(): AbortTrigger | undefined;
  /** Measurements due in this plan that need I/O and were not taken (`BookInput.taken`). */
  requests(): MeasureRequest[];
  /** Background checks that turned inconclusive in this plan. */
  turnedInconclusive(): string[];
}

export interface BookInput {
  revision: string;
  /** What a Prometheus query's variables stand for. */
  vars: QueryVariables;
  /** The checks defined (`rollingUpdate.analysis.checks`, their templates made concrete), by name. */
  checks: ReadonlyMap<string, ResolvedCheck>;
  prior: AnalysisStatus | undefined;
  /** Start the record again (an abort was retried in this plan). */
  restart: boolean;
  /** The App's pods at the update revision. */
  updated: readonly Stored<Pod>[];
  now: Date;
  /** Measurements of web checks taken for this plan, by key; undefined: none were taken. */
  taken?: ReadonlyMap<string, Measurement> | undefined;
}

const keyOf = (name: string, step: number | undefined): string => `${step ?? '-'}/${name}`;

function measureWith(check: ResolvedCheck, input: BookInput): Measurement {
  if (check.unresolved !== undefined) return { phase: MeasurementPhase.error, message: check.unresolved.slice(0, 1024), measuredAt: input.now.toISOString() };
  if (check.podHealth) return measurePodHealth(check.podHealth, input.updated, input.now, check.onNoData);
  return { phase: MeasurementPhase.error, message: 'the check names no provider this worker knows', measuredAt: input.now.toISOString() };
}

const WORDS: Record<Measurement['phase'], string> = { Successful: 'successful', Failed: 'failed', Inconclusive: 'inconclusive', Error: 'could not be taken' };
const REASONS = {
  Failed: EventReason.analysisMeasurementFailed,
  Inconclusive: EventReason.analysisMeasurementInconclusive,
  Error: EventReason.analysisMeasurementError,
} as const;

const whereOf = (run: AnalysisRun): string =>
  `${run.dryRun === true ? 'dry-run ' : ''}${run.step === undefined ? 'background analysis' : `canary step ${run.step + 1} analysis`}`;

function measurementEvent(run: AnalysisRun, m: Measurement): Action | undefined {
  if (m.phase === MeasurementPhase.successful) return undefined;
  const tally = `${run.failed} failed, ${run.inconclusive} inconclusive, ${run.consecutiveErrors ?? 0} errors in a row`;
  const message = `${whereOf(run)} ${run.name}: measurement ${WORDS[m.phase]} (${tally}): ${m.message ?? m.value ?? ''}`;
  return { kind: 'event', event: { type: 'Warning', reason: REASONS[m.phase], action: 'Measure', message } };
}

/** Whether a measurement of `check` is due: its run is running and its time came (a check with an initialDelay starts with a run that waits). */
const isDue = (check: AnalysisCheck, run: AnalysisRun | undefined, now: Date): boolean =>
  run === undefined
    ? initialDelayMs(check) === 0
    : run.phase === AnalysisPhase.running && (run.nextMeasurementAt === undefined || Date.parse(run.nextMeasurementAt) <= now.getTime());

/** A run as the verdict sees it: a dry-run check that ended counts as passed, whatever it found. */
const actingPhase = (r: AnalysisRun): AnalysisRun['phase'] => (r.dryRun === true && r.phase !== AnalysisPhase.running ? AnalysisPhase.successful : r.phase);

function verdictOf(runs: readonly AnalysisRun[]): StepVerdict {
  const phases = runs.map(actingPhase);
  if (phases.some((p) => p === AnalysisPhase.failed || p === AnalysisPhase.error)) return 'failed';
  if (phases.some((p) => p === AnalysisPhase.inconclusive)) return 'inconclusive';
  return phases.every((p) => p === AnalysisPhase.successful) ? 'passed' : 'running';
}

export function analysisBook(input: BookInput): AnalysisBook {
  const same = input.prior?.revision === input.revision && !input.restart;
  const runs = new Map<string, AnalysisRun>((same ? (input.prior?.runs ?? []) : []).map((r) => [keyOf(r.name, r.step), r]));
  // A retry starts the record of this revision again; a new revision's record starts with its first measurement.
  let touched = input.restart && input.prior?.revision === input.revision;
  const events: Action[] = [];
  const waits: number[] = [];
  let failure: AbortTrigger | undefined;
  const inconclusive: string[] = [];
  const requests: MeasureRequest[] = [];

  /**
   * A web or Prometheus measurement due and not finished: asked of the plan loop; when the loop asked already, it
   * is pending (no status change, a short wait). A run not recorded yet is recorded now, so the measurement it
   * asks for has an identity every later plan finds again (`MeasureRequest.due`).
   */
  const pending = (check: ResolvedCheck, key: string, step: number | undefined): AnalysisRun | undefined => {
    const prior = runs.get(key);
    // podHealth and an unresolved check measure in the plan; the others need I/O.
    if (check.podHealth !== undefined || check.unresolved !== undefined || !isDue(check, prior, input.now) || input.taken?.has(key) === true) return undefined;
    if (input.taken === undefined) {
      requests.push({ key, check, vars: input.vars, due: prior && (prior.nextMeasurementAt ?? prior.startedAt) });
      return prior ?? freshRun(check, step, input.now);
    }
    if (prior) {
      waits.push(MEASUREMENT_PENDING_WAIT_MS);
      return prior;
    }
    const fresh = freshRun(check, step, input.now);
    runs.set(key, fresh);
    touched = true;
    waits.push(RUN_RECORDED_WAIT_MS);
    return fresh;
  };

  const record = (check: AnalysisCheck, step: number | undefined, early: boolean, out: RunOutcome & { measured: Measurement }): void => {
    touched = true;
    runs.set(keyOf(check.name, step), out.run);
    const event = early && out.measured.phase !== MeasurementPhase.failed ? undefined : measurementEvent(out.run, out.measured);
    if (event) events.push(event);
    if (out.run.dryRun === true) return;
    const broke = out.run.phase === AnalysisPhase.failed || out.run.phase === AnalysisPhase.error;
    if (broke && !failure) failure = triggerOf(check, out.run, out.measured);
    if (out.run.phase === AnalysisPhase.inconclusive && step === undefined) inconclusive.push(check.name);
  };

  /** Inconclusive runs of `checks` start over: a person resumed the pause they caused. */
  const restartInconclusive = (checks: readonly AnalysisCheck[], step: number | undefined): void => {
    for (const check of checks) {
      const key = keyOf(check.name, step);
      const run = runs.get(key);
      // A dry-run check never paused anything, so nothing resumed it: it stays as it ended.
      if (run?.phase !== AnalysisPhase.inconclusive || run.dryRun === true) continue;
      runs.set(key, restartRun(run, input.now));
      touched = true;
    }
  };

  const advance = (names: readonly string[], step: number | undefined, early = false, resumed = false): StepVerdict => {
    const now: AnalysisRun[] = [];
    const checks = names.flatMap((n) => input.checks.get(n) ?? []);
    if (resumed) restartInconclusive(checks, step);
    for (const check of checks) {
      const key = keyOf(check.name, step);
      const waiting = pending(check, key, step);
      if (waiting) {
        now.push(waiting);
        continue;
      }
      const prior = runs.get(key);
      const out = advanceRun({ check, step, prior, now: input.now, early, measure: () => input.taken?.get(key) ?? measureWith(check, input) });
      if (out.measured) record(check, step, early, { ...out, measured: out.measured });
      else if (out.run !== prior) {
        // A check with an initialDelay started: its run records when, so the delay counts from here.
        runs.set(key, out.run);
        touched = true;
      }
      if (out.waitMs !== undefined) waits.push(out.waitMs);
      now.push(out.run);
    }
    return verdictOf(now);
  };

  return {
    step: (step, names, early, resumed) => advance(names, step, early, resumed),
    background: (names, resumed) => advance(names, undefined, false, resumed),
    status: () => (touched ? { revision: input.revision, runs: [...runs.values()] } : undefined),
    events: () => events,
    wait: () => (waits.length > 0 ? { reason: 'analysis', afterMs: Math.min(...waits) } : undefined),
    failure: () => failure,
    turnedInconclusive: () => inconclusive,
    requests: () => requests,
  };
}

function triggerOf(check: AnalysisCheck, run: AnalysisRun, m: Measurement): AbortTrigger {
  const why =
    run.phase === AnalysisPhase.error
      ? `${run.consecutiveErrors ?? 0} measurements in a row could not be taken (consecutiveErrorLimit ${check.consecutiveErrorLimit ?? DEFAULT_CONSECUTIVE_ERROR_LIMIT})`
      : `${run.failed} failed measurements`;
  return {
    reason: AbortReason.analysisFailed,
    message: `${whereOf(run)} ${run.name} failed: ${why}`,
    measurement: {
      analysis: run.name,
      ...(m.value === undefined ? {} : { value: m.value }),
      ...(m.message === undefined ? {} : { condition: m.message }),
      measuredAt: m.measuredAt,
    },
  };
}

/** Measurements `next` records that `prior` did not, by phase (what a plan measured: for the worker's metrics). */
export function measuredSince(prior: AnalysisStatus | undefined, next: AnalysisStatus | undefined): Partial<Record<Measurement['phase'], number>> {
  const seen = new Set<string>();
  if (prior && prior.revision === next?.revision)
    for (const r of prior.runs) for (const m of r.measurements) seen.add(`${keyOf(r.name, r.step)}@${m.measuredAt}`);
  const counts: Partial<Record<Measurement['phase'], number>> = {};
  for (const r of next?.runs ?? [])
    for (const m of r.measurements) if (!seen.has(`${keyOf(r.name, r.step)}@${m.measuredAt}`)) counts[m.phase] = (counts[m.phase] ?? 0) + 1;
  return counts;
}
