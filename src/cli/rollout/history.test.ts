import { describe, expect, it } from 'vitest';
import type { App } from '../../api/app.ts';
import type { ControllerRevision, Named } from '../../kube/types.ts';
import { chooseUndo, formatHistory } from './history.ts';
import { formatRevisionAnalysis } from './history-analysis.ts';

const tpl = (tag: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: `web:${tag}` }] } });

function app(tag: string, status: App['status'] = {}): App {
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'App',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: tpl(tag) },
    status,
  };
}

function rev(revision: number, tag: string): Named<ControllerRevision> {
  return { metadata: { name: `web-${tag}`, namespace: 'shop' }, revision, data: { spec: { template: tpl(tag) } } };
}

// Out of order on purpose: the choice sorts by revision number.
const history = [rev(3, 'v3'), rev(1, 'v1'), rev(2, 'v2')];

describe('chooseUndo', () => {
  it.each([
    ['the previous revision by default', app('v3'), history, 0, { kind: 'rollback', revision: 2 }],
    ['a named revision', app('v3'), history, 1, { kind: 'rollback', revision: 1 }],
    ['nothing when the template already is that revision', app('v2'), history, 2, { kind: 'skip', revision: 2 }],
    ['the previous one even while an undo to it is rolling', app('v2'), history, 0, { kind: 'skip', revision: 2 }],
  ])('picks %s', (_, a, revisions, to, want) => {
    const choice = chooseUndo(a, revisions, to);
    expect(choice.kind).toBe(want.kind);
    if (choice.kind === 'error') throw new Error(choice.message);
    expect(choice.revision.revision).toBe(want.revision);
    if (choice.kind === 'rollback') expect(choice.template).toEqual(tpl(`v${want.revision}`));
    else expect(choice.message).toBe(`skipped rollback (current template already matches revision ${want.revision})`);
  });

  it.each([
    ['no history', [], 0, 'no rollout history found for app "web"'],
    ['a single revision', [rev(1, 'v1')], 0, 'no previous revision of app "web" to go back to (only revision 1)'],
    ['an unknown revision', history, 7, 'unable to find revision 7 in the history of app "web" (revisions: 1, 2, 3)'],
    [
      'a revision without a template',
      [rev(1, 'v1'), { metadata: { name: 'web-x', namespace: 'shop' }, revision: 2, data: {} }, rev(3, 'v3')],
      2,
      'revision 2 (web-x) holds no pod template',
    ],
  ])('refuses %s', (_, revisions, to, message) => {
    expect(chooseUndo(app('v3'), revisions, to)).toEqual({ kind: 'error', message });
  });

  it('counts a revision stored before the schema defaults existed as the same template', () => {
    const defaulted = {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'web:v1', ports: [{ containerPort: 80, protocol: 'TCP' }] }] },
    };
    const bare = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'web:v1', ports: [{ containerPort: 80 }] }] } };
    const a = { ...app('v2'), spec: { ...app('v2').spec, template: defaulted } };
    const choice = chooseUndo(a, [{ ...rev(1, 'v1'), data: { spec: { template: bare } } }, rev(2, 'v2')], 1);
    expect(choice.kind).toBe('skip');
  });
});

describe('formatHistory', () => {
  it('lists revisions oldest first with their images and which one is current and which is rolling out', () => {
    const text = formatHistory(app('v3', { currentRevision: 'web-v2', updateRevision: 'web-v3' }), history);
    expect(text.split('\n')).toEqual([
      'REVISION  NAME    STATUS                   IMAGES',
      '1         web-v1                           web:v1',
      '2         web-v2  current (updating from)  web:v2',
      '3         web-v3  updating to              web:v3',
      '',
    ]);
  });

  it('says current once the rollout is done, and when there is no revision yet', () => {
    expect(formatHistory(app('v3', { currentRevision: 'web-v3', updateRevision: 'web-v3' }), history)).toContain('3         web-v3  current  web:v3');
    expect(formatHistory(app('v1'), [])).toBe('app "web" has no revisions yet\n');
  });
});

describe('history with analysis', () => {
  const at = '2026-01-02T03:04:05.000Z';
  const check = { name: 'errors', step: 1, successful: 1, failed: 1, inconclusive: 0, value: '0.5', message: 'result < 0.05 is false' };
  const withAnalysis = (status: App['status'], analysis = true): App => {
    const a = app('v3', status);
    return analysis ? { ...a, spec: { ...a.spec, updateStrategy: { rollingUpdate: { analysis: { checks: [] } } } } } : a;
  };
  const status: App['status'] = {
    currentRevision: 'web-v2',
    updateRevision: 'web-v3',
    analysisHistory: [{ revision: 'web-v2', outcome: 'Successful', finishedAt: at, checks: [{ ...check, phase: 'Successful', failed: 0, value: '0.01' }] }],
    analysis: {
      revision: 'web-v3',
      runs: [
        { ...check, phase: 'Running', startedAt: at, measurements: [{ phase: 'Failed', value: '0.5', message: 'result < 0.05 is false', measuredAt: at }] },
        {
          name: 'health',
          phase: 'Failed',
          dryRun: true,
          startedAt: at,
          successful: 0,
          failed: 2,
          inconclusive: 0,
          errors: 1,
          measurements: [{ phase: 'Failed', message: 'pod web-0 restarted 3 times', measuredAt: at }],
        },
      ],
    },
  };

  it('adds the outcome of each revision: kept for earlier ones, the record as it stands for the one rolling out', () => {
    expect(formatHistory(withAnalysis(status), history).split('\n')).toEqual([
      'REVISION  NAME    STATUS                   ANALYSIS    IMAGES',
      '1         web-v1                           -           web:v1',
      '2         web-v2  current (updating from)  Successful  web:v2',
      '3         web-v3  updating to              Running     web:v3',
      '',
    ]);
  });

  it('shows a failed or aborted rollout, and a record left behind by a template change', () => {
    const failed = { ...status, analysis: { ...status.analysis!, runs: [{ ...status.analysis!.runs[0]!, phase: 'Failed' as const }] } };
    expect(formatHistory(withAnalysis(failed), history)).toContain('3         web-v3  updating to              Failed      web:v3');
    const left = { ...status, updateRevision: 'web-v4' };
    expect(formatHistory(withAnalysis(left), history)).toContain('3         web-v3                           Superseded  web:v3');
  });

  it('--revision N: the checks of that revision, each with its step, phase, counts and last measurement', () => {
    expect(formatRevisionAnalysis(withAnalysis(status), 'web-v3').split('\n')).toEqual([
      `analysis: Running (last measured ${at})`,
      '  CHECK             STEP        PHASE    SUCCESSFUL  FAILED  INCONCLUSIVE  ERRORS  LAST MEASUREMENT',
      '  errors            2           Running  1           1       0             0       0.5 (result < 0.05 is false)',
      '  health (dry run)  background  Failed   0           2       0             1       pod web-0 restarted 3 times',
      '',
    ]);
    expect(formatRevisionAnalysis(withAnalysis(status), 'web-v2')).toContain('analysis: Successful');
    expect(formatRevisionAnalysis(withAnalysis(status), 'web-v1')).toBe('analysis: none recorded\n');
    // An App without analysis says nothing of it.
    expect(formatRevisionAnalysis(withAnalysis({}, false), 'web-v1')).toBe('');
  });
});
