/**
 * Pure: `status.analysisHistory` after a plan. When the plan leaves the record of one update revision
 * (`status.analysis`) for another's, or drops it because the update revision changed, the record is summed up
 * in one entry: its outcome, when it last measured, and per check its phase, counts and last measurement.
 * The newest entry comes last; at most `MAX_ANALYSIS_HISTORY` are kept, so the status stays bounded.
 *
 * The outcome is decided from the record and the status as read in that plan, before the new revision's
 * plan rewrites `status.abort` and the revisions: a failed check → Failed; an abort of that revision for
 * another reason → Aborted; the revision became the current one → Successful (a background check still
 * running stopped with the rollout); a check inconclusive → Inconclusive; else Superseded.
 */
import { AnalysisPhase, type AnalysisRun, type AnalysisStatus } from '../../../../api/analysis.ts';
import {
  AnalysisOutcome,
  MAX_ANALYSIS_HISTORY,
  MAX_HISTORY_CHECKS,
  MAX_HISTORY_TEXT,
  type AnalysisHistoryEntry,
  type CheckResult,
} from '../../../../api/analysis-history.ts';
import type { AppStatus } from '../../../../api/app-status.ts';

const acting = (runs: readonly AnalysisRun[]): AnalysisRun[] => runs.filter((r) => r.dryRun !== true);

export function outcomeOf(record: AnalysisStatus, status: AppStatus | undefined): AnalysisOutcome {
  const runs = acting(record.runs);
  if (runs.some((r) => r.phase === AnalysisPhase.failed || r.phase === AnalysisPhase.error)) return AnalysisOutcome.failed;
  if (status?.abort?.revision === record.revision) return AnalysisOutcome.aborted;
  if (status?.currentRevision === record.revision) return AnalysisOutcome.successful;
  if (runs.some((r) => r.phase === AnalysisPhase.inconclusive)) return AnalysisOutcome.inconclusive;
  return AnalysisOutcome.superseded;
}

const clip = (s: string | undefined): string | undefined => s?.slice(0, MAX_HISTORY_TEXT);

function resultOf(run: AnalysisRun): CheckResult {
  const last = run.measurements.at(-1);
  const value = clip(last?.value);
  const message = clip(last?.message);
  return {
    name: run.name,
    ...(run.step === undefined ? {} : { step: run.step }),
    phase: run.phase,
    ...(run.dryRun === true ? { dryRun: true } : {}),
    successful: run.successful,
    failed: run.failed,
    inconclusive: run.inconclusive,
    ...(run.errors ? { errors: run.errors } : {}),
    ...(value === undefined ? {} : { value }),
    ...(message === undefined ? {} : { message }),
  };
}

/** The checks an entry keeps: those that did not pass first, in the record's order, at most `MAX_HISTORY_CHECKS`. */
function keptRuns(runs: readonly AnalysisRun[]): AnalysisRun[] {
  if (runs.length <= MAX_HISTORY_CHECKS) return [...runs];
  const open = runs.filter((r) => r.phase !== AnalysisPhase.successful);
  const keep = new Set([...open, ...runs.filter((r) => r.phase === AnalysisPhase.successful)].slice(0, MAX_HISTORY_CHECKS));
  return runs.filter((r) => keep.has(r));
}

/** When the record last measured (its latest measurement, else when its latest check started). */
function finishedAt(record: AnalysisStatus): string | undefined {
  const times = record.runs.flatMap((r) => [r.startedAt, ...r.measurements.map((m) => m.measuredAt)]);
  return times.length === 0 ? undefined : times.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a));
}

/** The entry that sums up `record`, the status as read deciding its outcome. */
export function historyEntry(record: AnalysisStatus, status: AppStatus | undefined): AnalysisHistoryEntry {
  const at = finishedAt(record);
  return {
    revision: record.revision,
    outcome: outcomeOf(record, status),
    ...(at === undefined ? {} : { finishedAt: at }),
    checks: keptRuns(record.runs).map(resultOf),
  };
}

/**
 * The history after a plan whose record is `next` (undefined: none for the update revision). The record
 * as read is added when `next` belongs to another revision or is gone; an entry for the same revision
 * (a revision rolled out again) is replaced. Undefined: no history, none before and none now.
 */
export function analysisHistoryAfter(status: AppStatus | undefined, next: AnalysisStatus | undefined): AnalysisHistoryEntry[] | undefined {
  const before = status?.analysisHistory;
  const prior = status?.analysis;
  if (!prior || prior.revision === next?.revision || prior.runs.length === 0) return before;
  const kept = (before ?? []).filter((e) => e.revision !== prior.revision);
  return [...kept, historyEntry(prior, status)].slice(-MAX_ANALYSIS_HISTORY);
}
