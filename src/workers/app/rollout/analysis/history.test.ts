import { describe, expect, it } from 'vitest';
import type { AnalysisRun, AnalysisStatus } from '../../../../api/analysis.ts';
import { MAX_ANALYSIS_HISTORY, MAX_HISTORY_CHECKS, MAX_HISTORY_TEXT, type AnalysisHistoryEntry } from '../../../../api/analysis-history.ts';
import type { AppStatus } from '../../../../api/app-status.ts';
import { analysisHistoryAfter, historyEntry, outcomeOf } from './history.ts';

const at = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

function run(name: string, phase: AnalysisRun['phase'], extra: Partial<AnalysisRun> = {}): AnalysisRun {
  return {
    name,
    step: 1,
    phase,
    startedAt: at(0),
    successful: phase === 'Successful' ? 3 : 1,
    failed: phase === 'Failed' ? 1 : 0,
    inconclusive: phase === 'Inconclusive' ? 1 : 0,
    measurements: [
      { phase: 'Successful', value: '0.001', measuredAt: at(1) },
      { phase: phase === 'Running' ? 'Successful' : phase, value: '0.2', message: 'result < 0.05 is false', measuredAt: at(9) },
    ],
    ...extra,
  };
}

const record = (revision: string, ...runs: AnalysisRun[]): AnalysisStatus => ({ revision, runs });

describe('outcomeOf', () => {
  it.each<[string, AnalysisRun[], Partial<AppStatus>, string]>([
    ['a failed check', [run('errors', 'Failed')], { currentRevision: 'web-b' }, 'Failed'],
    [
      'a check ended in errors, while aborted',
      [run('errors', 'Error')],
      { abort: { revision: 'web-b', reason: 'AnalysisFailed', message: '', abortedAt: at(9) } },
      'Failed',
    ],
    [
      'an abort for another reason',
      [run('errors', 'Running')],
      { abort: { revision: 'web-b', reason: 'AbortRequested', message: '', abortedAt: at(9) } },
      'Aborted',
    ],
    [
      'a completed rollout, a background check still running',
      [run('errors', 'Successful'), run('health', 'Running', { step: undefined })],
      { currentRevision: 'web-b' },
      'Successful',
    ],
    ['a dry-run check that failed, the rollout completed', [run('shadow', 'Failed', { dryRun: true })], { currentRevision: 'web-b' }, 'Successful'],
    ['the template changed while a check was inconclusive', [run('errors', 'Inconclusive')], { currentRevision: 'web-a' }, 'Inconclusive'],
    ['the template changed while checks ran', [run('errors', 'Running')], { currentRevision: 'web-a' }, 'Superseded'],
  ])('%s', (_, runs, status, outcome) => {
    expect(outcomeOf(record('web-b', ...runs), { currentRevision: 'web-a', ...status })).toBe(outcome);
  });
});

describe('historyEntry', () => {
  it('keeps per check its phase, counts and last measurement, and when the record last measured', () => {
    const entry = historyEntry(record('web-b', run('errors', 'Failed', { errors: 2 }), run('health', 'Running', { step: undefined, dryRun: true })), {
      currentRevision: 'web-a',
    });
    expect(entry).toEqual({
      revision: 'web-b',
      outcome: 'Failed',
      finishedAt: at(9),
      checks: [
        { name: 'errors', step: 1, phase: 'Failed', successful: 1, failed: 1, inconclusive: 0, errors: 2, value: '0.2', message: 'result < 0.05 is false' },
        { name: 'health', phase: 'Running', dryRun: true, successful: 1, failed: 0, inconclusive: 0, value: '0.2', message: 'result < 0.05 is false' },
      ],
    });
  });

  it('is bounded: at most MAX_HISTORY_CHECKS checks (those that did not pass first), texts clipped', () => {
    const long = 'x'.repeat(2000);
    const runs = Array.from({ length: 40 }, (_, i) =>
      run(`c${i}`, i % 10 === 9 ? 'Failed' : 'Successful', {
        step: i,
        measurements: [{ phase: 'Failed', value: long, message: long, measuredAt: at(i) }],
      }),
    );
    const entry = historyEntry(record('web-b', ...runs), undefined);
    expect(entry.checks).toHaveLength(MAX_HISTORY_CHECKS);
    for (const name of ['c9', 'c19', 'c29', 'c39']) expect(entry.checks.map((c) => c.name)).toContain(name);
    // In the record's order.
    expect(entry.checks.map((c) => c.step)).toEqual([...entry.checks.map((c) => c.step ?? 0)].sort((a, b) => a - b));
    expect(entry.checks[0]?.value).toHaveLength(MAX_HISTORY_TEXT);
    expect(entry.finishedAt).toBe(at(39));
  });
});

describe('analysisHistoryAfter', () => {
  const b = record('web-b', run('errors', 'Successful'));

  it('adds the record as read when the plan leaves it for another revision, or drops it', () => {
    const status: AppStatus = { currentRevision: 'web-b', analysis: b };
    expect(analysisHistoryAfter(status, record('web-c', run('errors', 'Running')))).toEqual([
      expect.objectContaining({ revision: 'web-b', outcome: 'Successful' }),
    ]);
    expect(analysisHistoryAfter(status, undefined)).toEqual([expect.objectContaining({ revision: 'web-b', outcome: 'Successful' })]);
  });

  it('leaves the history alone while the record is the same revision (also a retry that starts it again)', () => {
    const before: AnalysisHistoryEntry[] = [{ revision: 'web-a', outcome: 'Successful', checks: [] }];
    expect(analysisHistoryAfter({ analysis: b, analysisHistory: before }, record('web-b'))).toBe(before);
    expect(analysisHistoryAfter({ analysisHistory: before }, record('web-c'))).toBe(before);
    expect(analysisHistoryAfter(undefined, record('web-c'))).toBeUndefined();
    // A record that never started a check says nothing.
    expect(analysisHistoryAfter({ analysis: record('web-b'), analysisHistory: before }, undefined)).toBe(before);
  });

  it('keeps the last MAX_ANALYSIS_HISTORY revisions, oldest first; a revision rolled out again replaces its entry', () => {
    let status: AppStatus = {};
    for (let i = 0; i < 8; i++) {
      status = { analysis: record(`web-${i}`, run('errors', 'Running')), analysisHistory: analysisHistoryAfter(status, record(`web-${i}`)) };
      status.analysisHistory = analysisHistoryAfter(status, record(`web-${i + 1}`));
    }
    expect(status.analysisHistory?.map((e) => e.revision)).toEqual(['web-3', 'web-4', 'web-5', 'web-6', 'web-7']);
    expect(status.analysisHistory).toHaveLength(MAX_ANALYSIS_HISTORY);
    const again = analysisHistoryAfter({ ...status, analysis: record('web-4', run('errors', 'Failed')) }, undefined);
    expect(again?.map((e) => `${e.revision} ${e.outcome}`)).toEqual([
      'web-3 Superseded',
      'web-5 Superseded',
      'web-6 Superseded',
      'web-7 Superseded',
      'web-4 Failed',
    ]);
  });

  it('stays bounded in size, whatever the records held', () => {
    const long = 'y'.repeat(1024);
    let status: AppStatus = {};
    for (let i = 0; i < 10; i++) {
      const runs = Array.from({ length: 160 }, (_, j) =>
        run(`check-${'z'.repeat(50)}-${j}`, 'Failed', {
          measurements: Array.from({ length: 10 }, () => ({ phase: 'Failed', value: long, message: long, measuredAt: at(j) })),
        }),
      );
      status = { analysis: record(`web-${'r'.repeat(40)}-${i}`, ...runs), analysisHistory: status.analysisHistory };
      status.analysisHistory = analysisHistoryAfter(status, undefined);
    }
    expect(JSON.stringify(status.analysisHistory).length).toBeLessThan(64 * 1024);
  });
});
