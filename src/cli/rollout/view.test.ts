import { describe, expect, it } from 'vitest';
import type { App } from '../../api/app.ts';
import type { Pod } from '../../kube/types.ts';
import { summarizePods, viewRollout, type PodsSummary } from './view.ts';

const NO_PODS: PodsSummary = { total: 0, inPlace: [], notReady: [], terminating: [] };

type Cond = { type: string; status: string; reason: string; message?: string };
const cond = (type: string, status: string, reason: string, message?: string): Cond => ({ type, status, reason, ...(message ? { message } : {}) });
const complete = cond('Progressing', 'False', 'RolloutComplete', '5 pods available at revision web-b');
const rolling = cond('Progressing', 'True', 'RollingUpdate', 'rolling update: 2 of 5 pods at revision web-b');

interface Fixture {
  generation?: number;
  observed?: number;
  replicas?: number;
  counts?: [updated: number, ready: number, available: number];
  conditions?: Cond[];
  rollingUpdate?: Record<string, unknown>;
  type?: string;
  canaryStep?: number;
  /** status.currentRevision (default web-a; the update revision is web-b). */
  current?: string;
  prewarm?: { nodesRequested: number; nodesPulled: number; nodesFailed: number };
}

function app(f: Fixture = {}): App {
  const [updated, ready, available] = f.counts ?? [5, 5, 5];
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'App',
    metadata: { name: 'web', namespace: 'shop', generation: f.generation ?? 2 },
    spec: {
      replicas: f.replicas ?? 5,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'web:2' }] } },
      updateStrategy: { type: (f.type ?? 'RollingUpdate') as 'RollingUpdate', ...(f.rollingUpdate ? { rollingUpdate: f.rollingUpdate } : {}) },
    },
    status: {
      observedGeneration: f.observed ?? 2,
      replicas: f.replicas ?? 5,
      updatedReplicas: updated,
      readyReplicas: ready,
      availableReplicas: available,
      currentRevision: f.current ?? 'web-a',
      updateRevision: 'web-b',
      ...(f.canaryStep === undefined ? {} : { canary: { step: f.canaryStep } }),
      ...(f.prewarm ? { prewarm: f.prewarm } : {}),
      conditions: (f.conditions ?? [complete]).map((c) => ({ ...c, lastTransitionTime: '2026-01-01T00:00:00Z' })),
    } as App['status'],
  };
}

const canary = { canary: { steps: [{ replicas: 1 }, { pause: {} }, { replicas: '50%' }, { pause: { duration: '60s' } }] } };

describe('viewRollout', () => {
  it.each<[string, App, PodsSummary, string, string]>([
    [
      'a spec not seen yet',
      app({ generation: 3 }),
      NO_PODS,
      'progressing',
      'web: waiting for generation 3 to be observed · updated 5/5 · ready 5/5 · available 5/5',
    ],
    [
      'a rolling update',
      app({ counts: [2, 4, 4], conditions: [rolling] }),
      NO_PODS,
      'progressing',
      'web: rolling update · updated 2/5 · ready 4/5 · available 4/5',
    ],
    [
      'a canary analysis step measuring',
      (() => {
        const a = app({
          counts: [1, 5, 5],
          canaryStep: 1,
          rollingUpdate: { canary: { steps: [{ replicas: 1 }, { analysis: ['health'] }] } },
          conditions: [cond('Progressing', 'True', 'CanaryStep')],
        });
        const run = {
          name: 'health',
          step: 1,
          phase: 'Running' as const,
          startedAt: '2026-01-01T00:00:00Z',
          successful: 2,
          failed: 0,
          inconclusive: 1,
          measurements: [],
        };
        return { ...a, status: { ...a.status, analysis: { revision: 'web-b', runs: [run] } } };
      })(),
      NO_PODS,
      'progressing',
      'web: canary step 2/2 (analysis health) · updated 1/5 · ready 5/5 · available 5/5 · analysis health running (2 passed, 0 failed, 1 inconclusive)',
    ],
    [
      'a canary pause step, paused',
      app({
        counts: [1, 5, 5],
        canaryStep: 1,
        rollingUpdate: { ...canary, paused: true },
        conditions: [cond('Progressing', 'True', 'CanaryStep'), cond('Paused', 'True', 'CanaryPause', 'x')],
      }),
      NO_PODS,
      'progressing',
      'web: canary step 2/4 (pause) · updated 1/5 · ready 5/5 · available 5/5 · paused',
    ],
    [
      'a timed canary pause, with its end',
      app({
        counts: [3, 5, 5],
        canaryStep: 3,
        rollingUpdate: canary,
        conditions: [rolling, cond('Paused', 'True', 'CanaryTimedPause', 'canary step 4: paused until 2026-01-01T00:01:00.000Z')],
      }),
      NO_PODS,
      'progressing',
      'web: canary step 4/4 (pause 60s) · updated 3/5 · ready 5/5 · available 5/5 · canary step 4: paused until 2026-01-01T00:01:00.000Z',
    ],
    [
      'pods on a lifecycle hook, in place, not ready, terminating, and pre-warm',
      app({
        counts: [3, 3, 3],
        canaryStep: 2,
        rollingUpdate: canary,
        prewarm: { nodesRequested: 3, nodesPulled: 1, nodesFailed: 1 },
        conditions: [rolling, cond('LifecycleHookWaiting', 'True', 'PreNormalHook', 'web-3 waits on the preNormal hook for 42s')],
      }),
      { total: 6, inPlace: ['web-4'], notReady: ['web-0', 'web-1', 'web-2', 'web-3'], terminating: ['web-5'] },
      'progressing',
      'web: canary step 3/4 (replicas 50%) · updated 3/5 · ready 3/5 · available 3/5 · hook: web-3 waits on the preNormal hook for 42s · pre-warm 1/3 nodes (1 failed) · in place: web-4 · not ready: web-0, web-1, web-2 +1 more · terminating: web-5',
    ],
    [
      'a hook condition that is False is not shown',
      app({ conditions: [rolling, cond('LifecycleHookWaiting', 'False', 'NoHookPending')] }),
      NO_PODS,
      'progressing',
      'web: rolling update · updated 5/5 · ready 5/5 · available 5/5',
    ],
    [
      'a held rollout',
      app({ counts: [1, 5, 5], conditions: [rolling, cond('RolloutHeld', 'True', 'ReplacementRefused', 'pods "web-4" is forbidden')] }),
      NO_PODS,
      'progressing',
      'web: rolling update · updated 1/5 · ready 5/5 · available 5/5 · held: pods "web-4" is forbidden',
    ],
    [
      'a partition',
      app({ counts: [2, 5, 5], rollingUpdate: { partition: 3 }, conditions: [rolling] }),
      NO_PODS,
      'progressing',
      'web: rolling update · updated 2/2 (partition 3) · ready 5/5 · available 5/5',
    ],
    [
      'scaling',
      app({ counts: [3, 3, 3], current: 'web-b', conditions: [cond('Progressing', 'True', 'Scaling')] }),
      NO_PODS,
      'progressing',
      'web: scaling · updated 3/5 · ready 3/5 · available 3/5',
    ],
    [
      'Scaling said during a rollout step (a pod recreated, not ready yet): the rolling update',
      app({ counts: [5, 4, 4], conditions: [cond('Progressing', 'True', 'Scaling')] }),
      { total: 5, inPlace: [], notReady: ['web-0'], terminating: [] },
      'progressing',
      'web: rolling update · updated 5/5 · ready 4/5 · available 4/5 · not ready: web-0',
    ],
    [
      'Scaling said while a pod is updated in place: the rolling update',
      app({ counts: [5, 4, 4], current: 'web-b', conditions: [cond('Progressing', 'True', 'Scaling')] }),
      { total: 5, inPlace: ['web-0'], notReady: [], terminating: [] },
      'progressing',
      'web: rolling update · updated 5/5 · ready 4/5 · available 4/5 · in place: web-0',
    ],
  ])('%s', (_, a, pods, state, line) => {
    const view = viewRollout(a, pods);
    expect(view.line).toBe(line);
    expect(view.state).toBe(state);
  });

  it.each<[string, App, string, string]>([
    ['complete', app(), 'done', 'app "web" rolled out: 5 pods at revision web-b'],
    [
      'complete up to the partition',
      app({ counts: [2, 5, 5], rollingUpdate: { partition: 3 } }),
      'done',
      'app "web" partitioned rollout complete: 2 of 5 pods at revision web-b (partition 3)',
    ],
    [
      'past its progress deadline',
      app({ counts: [2, 4, 4], conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'no progress for 600s')] }),
      'deadline',
      'app "web" exceeded its progress deadline: no progress for 600s',
    ],
    [
      'an invalid spec',
      app({ conditions: [rolling, cond('InvalidSpec', 'True', 'SpecInvalid', 'volumeClaimTemplates[0] has no name')] }),
      'failed',
      'app "web" rollout failed: invalid spec: volumeClaimTemplates[0] has no name',
    ],
    [
      'an in-place update refused by InPlaceOnly',
      app({ counts: [2, 5, 5], conditions: [rolling, cond('InPlaceFallback', 'True', 'InPlaceOnlyRefused', 'Pod web-4 was not updated')] }),
      'failed',
      'app "web" rollout failed: Pod web-4 was not updated',
    ],
    ['OnDelete', app({ type: 'OnDelete' }), 'failed', 'app "web" uses the OnDelete strategy: rollout status is only available for RollingUpdate'],
  ])('%s', (_, a, state, final) => {
    const view = viewRollout(a, NO_PODS);
    expect(view.state).toBe(state);
    expect(view.final).toBe(final);
  });

  it.each<[string, App]>([
    ['complete but the spec not seen yet', app({ generation: 3 })],
    ['Progressing False for another reason', app({ conditions: [cond('Progressing', 'False', 'SomethingElse')] })],
    ['said complete while a pod is not available', app({ counts: [5, 5, 4] })],
    ['paused by the spec', app({ counts: [1, 5, 5], rollingUpdate: { paused: true }, conditions: [rolling, cond('Paused', 'True', 'PausedBySpec')] })],
  ])('is not over when %s', (_, a) => {
    const view = viewRollout(a, NO_PODS);
    expect(view.state).toBe('progressing');
    expect(view.final).toBeUndefined();
  });
});

describe('summarizePods', () => {
  const pod = (name: string, over: Partial<Pod> = {}): Pod => ({
    metadata: { name, ...over.metadata },
    spec: { containers: [{ name: 'main', image: 'web:2' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], ...over.status },
  });
  it('sorts pods by what they are doing, in ordinal order', () => {
    const s = summarizePods([
      pod('web-10', { status: { phase: 'Pending' } }),
      pod('web-2', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } }),
      pod('web-3', { metadata: { name: 'web-3', deletionTimestamp: '2026-01-01T00:00:00Z' } }),
      pod('web-1', {
        status: {
          phase: 'Running',
          conditions: [
            { type: 'Ready', status: 'False' },
            { type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate' },
          ],
        },
      }),
      pod('web-0'),
    ]);
    expect(s).toEqual({ total: 5, inPlace: ['web-1'], notReady: ['web-2', 'web-10'], terminating: ['web-3'] });
  });
});
