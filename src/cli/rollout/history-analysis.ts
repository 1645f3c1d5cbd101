/**
 * Pure: the analysis of each revision as `ebb rollout history` shows it: the outcome kept in
 * `status.analysisHistory` for earlier update revisions, and for the revision of `status.analysis` its
 * record as it stands (Running while its rollout goes on).
 */
import type { App } from '../../api/app.ts';
import type { AnalysisHistoryEntry, CheckResult } from '../../api/analysis-history.ts';
import { AnalysisOutcome } from '../../api/analysis-history.ts';
import { historyEntry } from '../../workers/app/rollout/analysis/history.ts';
import { table } from './explain/render.ts';
import { rolloutSettings } from '../../workers/app/model/rollout-settings.ts';

/** An entry as shown: its outcome, or Running for the record of a rollout still under way. */
export type ShownAnalysis = Omit<AnalysisHistoryEntry, 'outcome'> & { outcome: AnalysisHistoryEntry['outcome'] | 'Running' };

/** The analysis of each revision that has one, by revision name. */
export function analysisByRevision(app: App): Map<string, ShownAnalysis> {
  const shown = new Map<string, ShownAnalysis>((app.status?.analysisHistory ?? []).map((e) => [e.revision, e]));
  const record = app.status?.analysis;
  if (record && record.runs.length > 0) {
    const entry = historyEntry(record, app.status);
    const running = entry.outcome === AnalysisOutcome.superseded && record.revision === app.status?.updateRevision;
    shown.set(record.revision, running ? { ...entry, outcome: 'Running' } : entry);
  }
  return shown;
}

function last(c: CheckResult): string {
  if (c.value !== undefined && c.message !== undefined) return `${c.value} (${c.message})`;
  return c.value ?? c.message ?? '';
}

/**
 * `--revision N`: the outcome of its analysis and each check's phase, counts and last measurement. Nothing
 * for an App that neither defines checks nor recorded any.
 */
export function formatRevisionAnalysis(app: App, revision: string): string {
  const all = analysisByRevision(app);
  const entry = all.get(revision);
  if (!entry) return all.size > 0 || rolloutSettings(app).analysis ? 'analysis: none recorded\n' : '';
  const when = entry.finishedAt ? ` (last measured ${entry.finishedAt})` : '';
  const rows = entry.checks.map((c) => [
    `${c.name}${c.dryRun === true ? ' (dry run)' : ''}`,
    c.step === undefined ? 'background' : String(c.step + 1),
    c.phase,
    String(c.successful),
    String(c.failed),
    String(c.inconclusive),
    String(c.errors ?? 0),
    last(c),
  ]);
  const lines = table([['CHECK', 'STEP', 'PHASE', 'SUCCESSFUL', 'FAILED', 'INCONCLUSIVE', 'ERRORS', 'LAST MEASUREMENT'], ...rows]);
  return `analysis: ${entry.outcome}${when}\n${lines.map((l) => `  ${l}`).join('\n')}\n`;
}
