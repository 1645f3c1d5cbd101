import { describe, expect, it } from 'vitest';
import type { App } from '../api/app.ts';
import type { AppStatus } from '../api/app-status.ts';
import { RolloutAnnotation } from '../api/rollout-abort.ts';
import { planAbort, planPromote, planRetry } from './control.ts';
import { formatHistory } from '../cli/rollout/history.ts';
import { viewRollout } from '../cli/rollout/view.ts';

const ABORT = RolloutAnnotation.abort;
const RETRY = RolloutAnnotation.retry;
const PROMOTE = RolloutAnnotation.promote;
const steps = [{ replicas: 1 }, { pause: {} }, { replicas: '100%' }];

interface Fixture {
  status?: Partial<AppStatus>;
  annotations?: Record<string, string>;
  paused?: boolean;
  canary?: boolean;
  generation?: number;
}

function app(f: Fixture = {}): App {
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'App',
    metadata: {
      name: 'web',
      namespace: 'shop',
      generation: f.generation ?? 2,
      resourceVersion: '41',
      ...(f.annotations ? { annotations: f.annotations } : {}),
    },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'web:2' }] } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: f.paused ?? false, ...(f.canary === false ? {} : { canary: { steps } }) } },
    },
    status: { observedGeneration: 2, currentRevision: 'web-a', updateRevision: 'web-b', canary: { step: 1 }, ...f.status },
  };
}

const aborted = { revision: 'web-b', reason: 'ProgressDeadlineExceeded' as const, message: 'stuck for 30s', abortedAt: '2026-01-02T03:04:05.678Z' };
const pausedByStep = [{ type: 'Paused', status: 'True', reason: 'CanaryPause', message: 'canary step 2: paused' }];
const PAUSED_BY = RolloutAnnotation.pausedBy;

describe('planAbort', () => {
  it('requests the abort of the update revision, guarded by the resourceVersion', () => {
    expect(planAbort(app())).toEqual({
      kind: 'patch',
      patch: { metadata: { resourceVersion: '41', annotations: { [ABORT]: 'web-b' } } },
      message: 'rollout of revision web-b aborted: pods go back to revision web-a (spec.template unchanged)',
    });
  });

  it.each<[string, Fixture, string]>([
    ['no rollout in progress', { status: { currentRevision: 'web-b' } }, 'no rollout in progress'],
    ['a generation not yet observed', { generation: 3 }, 'generation 3 is not yet observed'],
  ])('refuses with %s', (_, f, text) => {
    const plan = planAbort(app(f));
    expect(plan.kind).toBe('refuse');
    expect(plan.message).toContain(text);
  });

  it('refuses, writing nothing, an abort the worker would refuse (a revision made since the stable one)', () => {
    const plan = planAbort(app(), 'going back to the stable revision web-a (1) would also undo revision web-x (2) made since');
    expect(plan).toEqual({ kind: 'refuse', message: 'not aborted: going back to the stable revision web-a (1) would also undo revision web-x (2) made since' });
  });

  it('skips a rollout already aborted, by request or by the worker', () => {
    expect(planAbort(app({ annotations: { [ABORT]: 'web-b' } })).kind).toBe('skip');
    expect(planAbort(app({ status: { abort: aborted } })).kind).toBe('skip');
  });
});

describe('planRetry', () => {
  it('names the recorded abort and withdraws the requests', () => {
    const plan = planRetry(app({ status: { abort: aborted }, annotations: { [ABORT]: 'web-b' } }));
    expect(plan).toMatchObject({
      kind: 'patch',
      patch: { metadata: { resourceVersion: '41', annotations: { [ABORT]: null, [PROMOTE]: null, [RETRY]: aborted.abortedAt } } },
    });
  });

  it('withdraws a request the worker has not recorded yet', () => {
    expect(planRetry(app({ annotations: { [ABORT]: 'web-b' } }))).toMatchObject({ kind: 'patch', patch: { metadata: { annotations: { [ABORT]: null } } } });
  });

  it('refuses when nothing is aborted', () => {
    expect(planRetry(app()).kind).toBe('refuse');
  });
});

describe('planPromote', () => {
  it('skips the remaining steps and lifts the pause a step set', () => {
    const plan = planPromote(
      app({ paused: true, annotations: { [PAUSED_BY]: 'CanaryStep/web-b' }, status: { conditions: pausedByStep as AppStatus['conditions'] } }),
    );
    expect(plan).toEqual({
      kind: 'patch',
      patch: {
        metadata: { resourceVersion: '41', annotations: { [PROMOTE]: 'web-b', [PAUSED_BY]: null } },
        spec: { updateStrategy: { rollingUpdate: { paused: false } } },
      },
      message: "rollout of revision web-b promoted: canary steps 2 to 3 skipped; ebb's pause lifted (CanaryStep)",
    });
  });

  it('leaves a pause a person set, and says so', () => {
    const plan = planPromote(app({ paused: true }));
    expect(plan.kind).toBe('patch');
    if (plan.kind === 'patch') expect(plan.patch).not.toHaveProperty('spec');
    expect(plan.message).toContain('stays paused (spec)');
  });

  it('decides from who paused, not from the Paused condition', () => {
    // A person's pause shows CanaryPause while a pause step stands, and took ebb's over (paused-by removed): it holds.
    const person = planPromote(app({ paused: true, status: { conditions: pausedByStep as AppStatus['conditions'] } }));
    expect(person.kind === 'patch' ? (person.patch as object) : {}).not.toHaveProperty('spec');
    // A background check turned inconclusive: the Paused reason is the spec's, yet ebb paused, so the pause is lifted.
    const bySpec = [{ type: 'Paused', status: 'True', reason: 'PausedBySpec', message: 'paused' }] as AppStatus['conditions'];
    for (const cause of ['AnalysisInconclusive', 'ProgressDeadlineExceeded']) {
      const plan = planPromote(app({ paused: true, annotations: { [PAUSED_BY]: `${cause}/web-b` }, status: { conditions: bySpec } }));
      expect(plan).toMatchObject({ kind: 'patch', patch: { spec: { updateStrategy: { rollingUpdate: { paused: false } } } } });
      expect(plan.message).toContain(`ebb's pause lifted (${cause})`);
    }
    // A note ebb does not write is no proof of ebb's pause.
    const forged = planPromote(app({ paused: true, annotations: { [PAUSED_BY]: 'someone' } }));
    expect(forged.kind === 'patch' ? (forged.patch as object) : {}).not.toHaveProperty('spec');
  });

  it("lifts ebb's pause with no steps left to skip, writing no promote request", () => {
    const annotations = { [PAUSED_BY]: 'AnalysisInconclusive/web-b' };
    for (const f of [{ canary: false }, { status: { canary: { step: 3 } } }]) {
      expect(planPromote(app({ ...f, paused: true, annotations }))).toEqual({
        kind: 'patch',
        patch: { metadata: { resourceVersion: '41', annotations: { [PAUSED_BY]: null } }, spec: { updateStrategy: { rollingUpdate: { paused: false } } } },
        message: "rollout of revision web-b promoted: ebb's pause lifted (AnalysisInconclusive)",
      });
    }
  });

  it('refuses an aborted rollout (retry first); skips without steps or past them', () => {
    expect(planPromote(app({ status: { abort: aborted } })).kind).toBe('refuse');
    expect(planPromote(app({ canary: false })).kind).toBe('skip');
    expect(planPromote(app({ status: { canary: { step: 3 } } })).kind).toBe('skip');
    expect(planPromote(app({ annotations: { [PROMOTE]: 'web-b' } })).kind).toBe('skip');
  });
});

describe('planPromote --full', () => {
  const FULL = RolloutAnnotation.promoteFull;

  it('names the revision in both annotations, skips the steps and the analysis, and lifts the pause a step set', () => {
    const plan = planPromote(
      app({ paused: true, annotations: { [PAUSED_BY]: 'CanaryStep/web-b' }, status: { conditions: pausedByStep as AppStatus['conditions'] } }),
      true,
    );
    expect(plan).toEqual({
      kind: 'patch',
      patch: {
        metadata: { resourceVersion: '41', annotations: { [PROMOTE]: 'web-b', [FULL]: 'web-b', [PAUSED_BY]: null } },
        spec: { updateStrategy: { rollingUpdate: { paused: false } } },
      },
      message: "rollout of revision web-b fully promoted: canary steps 2 to 3 skipped; its analysis skipped; ebb's pause lifted (CanaryStep)",
    });
  });

  it('applies with no steps or none left (background checks still measure), once; a retry clears it', () => {
    expect(planPromote(app({ canary: false }), true)).toMatchObject({
      kind: 'patch',
      message: 'rollout of revision web-b fully promoted: its analysis skipped',
    });
    expect(planPromote(app({ status: { canary: { step: 3 } } }), true).kind).toBe('patch');
    // A plain promote written before does not make --full a no-op.
    expect(planPromote(app({ annotations: { [PROMOTE]: 'web-b' } }), true).kind).toBe('patch');
    expect(planPromote(app({ annotations: { [PROMOTE]: 'web-b', [FULL]: 'web-b' } }), true).kind).toBe('skip');
    expect(planPromote(app({ status: { abort: aborted } }), true).kind).toBe('refuse');
    expect(planRetry(app({ status: { abort: aborted } }))).toMatchObject({ patch: { metadata: { annotations: { [FULL]: null } } } });
  });
});

describe('status and history show aborts', () => {
  const conditions = (progressing: string, status: string) =>
    [
      { type: 'Progressing', status, reason: progressing, message: '' },
      { type: 'Aborted', status: 'True', reason: 'ProgressDeadlineExceeded', message: 'rollout of revision web-b aborted: stuck for 30s' },
    ] as AppStatus['conditions'];

  it('an abort is final at once (as Argo Rollouts ends at Degraded), saying whether every pod is back yet', () => {
    const none = { total: 4, inPlace: [], notReady: [], terminating: [] };
    const going = viewRollout(app({ status: { abort: aborted, conditions: conditions('RollingBack', 'True') } }), none);
    expect(going.state).toBe('aborted');
    expect(going.line).toContain('aborted (ProgressDeadlineExceeded): rolling back to revision web-a');
    expect(going.final).toBe('app "web" rollout aborted: rollout of revision web-b aborted: stuck for 30s; pods are going back to revision web-a');
    const back = viewRollout(app({ status: { abort: aborted, conditions: conditions('RolloutAborted', 'False') } }), none);
    expect(back.state).toBe('aborted');
    expect(back.final).toBe('app "web" rollout aborted: rollout of revision web-b aborted: stuck for 30s; every pod is back at revision web-a');
  });

  it('history marks the aborted revision and says why, with the failed measurement', () => {
    const revision = (name: string, n: number) => ({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name, namespace: 'shop' },
      revision: n,
      data: { spec: { template: { spec: { containers: [{ name: 'main', image: `web:${n}` }] } } } },
    });
    const measurement = { analysis: 'error-rate', value: '0.12', condition: 'result < 0.05' };
    const text = formatHistory(app({ status: { abort: { ...aborted, reason: 'AnalysisFailed', measurement } } }), [revision('web-a', 1), revision('web-b', 2)]);
    expect(text).toContain('web-b  aborted (AnalysisFailed)');
    expect(text).toContain('revision web-b aborted at 2026-01-02T03:04:05.678Z (AnalysisFailed): stuck for 30s');
    expect(text).toContain('failed measurement: error-rate = 0.12 (result < 0.05)');
  });
});
