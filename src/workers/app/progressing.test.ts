/** The Progressing condition at the end of a rollout: the rollout's last step is never reported as scaling. */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../api/app-spec.ts';
import { makeApp, planned, podFor, type PodState, stored } from '../../../test/unit/app/fixtures.ts';
import type { ControllerRevision, Stored } from '../../kube/types.ts';
import type { Observed } from './model/plan.ts';
import { newRevision, revisionData } from './revisions/revisions.ts';

const NOW = new Date('2025-06-01T00:00:00Z');
const v = (tag: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: `web:${tag}` }] } });
const parallel = { podManagementPolicy: 'Parallel' } as const;

function revisionOf(spec: Partial<AppSpec>, n: number): Stored<ControllerRevision> {
  const app = makeApp('web', spec);
  return stored<ControllerRevision>(newRevision(app, revisionData(app), n, 0), `rev-${n}`);
}

type PodSpecTuple = [number, PodState, 'old' | 'new'];

/** An App at template v2 whose status names v1 current, with pods at `old` (v1) or `new` (v2). */
function world(spec: Partial<AppSpec>, pods: PodSpecTuple[]): Observed {
  const oldRev = revisionOf({ ...spec, template: v('v1') }, 1);
  const newRev = revisionOf({ ...spec, template: v('v2') }, 2);
  const app = makeApp('web', { ...spec, template: v('v2') });
  app.status = { currentRevision: oldRev.metadata.name, updateRevision: newRev.metadata.name };
  return {
    app,
    pods: pods.map(([o, state, r]) => podFor(app, o, (r === 'old' ? oldRev : newRev).metadata.name, state)),
    revisions: [oldRev, newRev],
    claims: [],
  };
}

const allNew = (n: number): PodSpecTuple[] => Array.from({ length: n }, (_, i) => [i, 'ready', 'new']);

describe('Progressing at the last step of a rollout', () => {
  const progressing = (p: ReturnType<typeof planned>) => p.status.conditions?.find((c) => c.type === 'Progressing');

  it.each<[string, PodSpecTuple[]]>([
    [
      'the last pod deleted to be recreated',
      [
        [1, 'ready', 'new'],
        [2, 'ready', 'new'],
      ],
    ],
    [
      'the last pod recreated (or updated in place), not ready yet',
      [
        [0, 'unready', 'new'],
        [1, 'ready', 'new'],
        [2, 'ready', 'new'],
      ],
    ],
  ])('%s: the rolling update, never scaling', (_, pods) => {
    const p = planned(world({ ...parallel, replicas: 3 }, pods), NOW);
    expect(progressing(p)).toMatchObject({ status: 'True', reason: 'RollingUpdate' });
    expect(progressing(p)?.message).toMatch(/^rolling update: \d of 3 pods at revision /);
  });

  it.each([
    ['RollingUpdate', 'RollingUpdate'],
    ['Scaling', 'Scaling'],
  ])('every pod updated and ready, the last not available yet (minReadySeconds), after Progressing %s: %s', (before, after) => {
    const obs = world({ ...parallel, replicas: 3, minReadySeconds: 60 }, []);
    const update = obs.app.status?.updateRevision ?? '';
    obs.pods = [0, 1, 2].map((o) => podFor(obs.app, o, update, 'ready', o === 0 ? '2025-05-31T23:59:50Z' : '2025-01-01T00:00:00Z'));
    obs.app.status = {
      ...obs.app.status,
      conditions: [{ type: 'Progressing', status: 'True', reason: before, message: 'x', lastTransitionTime: '2025-05-31T23:00:00Z' }],
    };
    const p = planned(obs, NOW);
    expect(p.status.currentRevision).toBe(update);
    expect(progressing(p)).toMatchObject({ status: 'True', reason: after });
  });

  it('a scale of an App whose rollout is complete is scaling', () => {
    const obs = world({ ...parallel, replicas: 3 }, allNew(2));
    obs.app.status = { ...obs.app.status, currentRevision: obs.app.status?.updateRevision ?? '' };
    expect(progressing(planned(obs, NOW))).toMatchObject({ status: 'True', reason: 'Scaling' });
  });
});
