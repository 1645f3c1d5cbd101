import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../api/app-spec.ts';
import { makeApp, podFor, type PodState, stored } from '../../../test/unit/app/fixtures.ts';
import type { Action } from './model/actions.ts';
import type { ControllerRevision, Stored } from '../../kube/types.ts';
import { plan } from './planner.ts';
import type { Observed } from './model/plan.ts';
import { planned } from '../../../test/unit/app/fixtures.ts';
import { newRevision, revisionData } from './revisions/revisions.ts';

const NOW = new Date('2025-06-01T00:00:00Z');
const v = (tag: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: `web:${tag}` }] } });

function revisionOf(spec: Partial<AppSpec>, n: number): Stored<ControllerRevision> {
  const app = makeApp('web', spec);
  return stored<ControllerRevision>(newRevision(app, revisionData(app), n, 0), `rev-${n}`);
}

type PodSpecTuple = [number, PodState, 'old' | 'new'];

/** An App at template v2 whose pods are at `old` (v1) or `new` (v2) revisions. */
function world(spec: Partial<AppSpec>, pods: PodSpecTuple[], extra: { deleting?: boolean } = {}): Observed {
  const oldRev = revisionOf({ ...spec, template: v('v1') }, 1);
  const newRev = revisionOf({ ...spec, template: v('v2') }, 2);
  const app = makeApp('web', { ...spec, template: v('v2') }, extra.deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {});
  app.status = { currentRevision: oldRev.metadata.name, updateRevision: newRev.metadata.name };
  return {
    app,
    pods: pods.map(([o, state, r]) => podFor(app, o, (r === 'old' ? oldRev : newRev).metadata.name, state)),
    revisions: [oldRev, newRev],
    claims: [],
  };
}

const summary = (actions: Action[]): string[] =>
  actions.map((a) => {
    switch (a.kind) {
      case 'createPod':
        return `create ${a.pod.metadata.name}`;
      case 'deletePod':
        return `delete ${a.name} (${a.cause})`;
      case 'event':
        return `event ${a.event.reason}`;
      default:
        return a.kind;
    }
  });

const ordered = { podManagementPolicy: 'OrderedReady' } as const;
const parallel = { podManagementPolicy: 'Parallel' } as const;
const rolling = (ru: object) => ({ updateStrategy: { type: 'RollingUpdate' as const, rollingUpdate: ru } });
const allNew = (n: number, state: PodState = 'ready'): PodSpecTuple[] => Array.from({ length: n }, (_, i) => [i, state, 'new']);
/** Pods at ordinals 0, 1, … in these states and revisions. */
const seq = (...pods: [PodState, 'old' | 'new'][]): PodSpecTuple[] => pods.map(([state, r], i) => [i, state, r]);
const allOld = (n: number): PodSpecTuple[] => Array.from({ length: n }, (_, i) => [i, 'ready', 'old']);

describe('plan', () => {
  it.each<[string, Partial<AppSpec>, PodSpecTuple[], string[]]>([
    ['OrderedReady, no pods: the first pod only', { ...ordered, replicas: 3 }, [], ['create web-0']],
    ['Parallel, no pods: every pod', { ...parallel, replicas: 3 }, [], ['create web-0', 'create web-1', 'create web-2']],
    [
      'OrderedReady waits for a pending predecessor',
      { ...ordered, replicas: 3 },
      [
        [0, 'ready', 'new'],
        [1, 'pending', 'new'],
      ],
      [],
    ],
    ['OrderedReady waits for an unready predecessor', { ...ordered, replicas: 3 }, [[0, 'unready', 'new']], []],
    [
      'OrderedReady waits for a terminating pod to go',
      { ...ordered, replicas: 2 },
      [
        [0, 'ready', 'new'],
        [1, 'terminating', 'new'],
      ],
      [],
    ],
    ['Parallel creates around a pending pod', { ...parallel, replicas: 3 }, [[1, 'pending', 'new']], ['create web-0', 'create web-2']],
    [
      'a failed pod is deleted (to be recreated)',
      { ...ordered, replicas: 2 },
      [
        [0, 'failed', 'new'],
        [1, 'ready', 'new'],
      ],
      ['delete web-0 (failed)'],
    ],
    ['OrderedReady scale-down: highest first, one at a time', { ...ordered, replicas: 2 }, allNew(4), ['delete web-3 (condemned)']],
    ['Parallel scale-down: all at once, highest first', { ...parallel, replicas: 2 }, allNew(4), ['delete web-3 (condemned)', 'delete web-2 (condemned)']],
    [
      'OrderedReady scale-down waits for a terminating condemned pod',
      { ...ordered, replicas: 1 },
      [
        [0, 'ready', 'new'],
        [1, 'ready', 'new'],
        [2, 'terminating', 'new'],
      ],
      [],
    ],
    [
      'OrderedReady scale-down removes the first unhealthy condemned pod',
      { ...ordered, replicas: 1 },
      [
        [0, 'ready', 'new'],
        [1, 'unready', 'new'],
      ],
      ['delete web-1 (condemned)'],
    ],
    [
      'OrderedReady scale-down blocks behind an unhealthy lower condemned pod',
      { ...ordered, replicas: 1 },
      [
        [0, 'ready', 'new'],
        [1, 'unready', 'new'],
        [2, 'unready', 'new'],
      ],
      [],
    ],
    ['scale-down comes before the rolling update', { ...ordered, replicas: 2 }, allOld(3), ['delete web-2 (condemned)']],
    ['rolling update, maxUnavailable 1: the highest outdated pod', { ...ordered, replicas: 3 }, allOld(3), ['delete web-2 (update)']],
    [
      'rolling update, maxUnavailable 2',
      { ...parallel, replicas: 4, ...rolling({ maxUnavailable: 2 }) },
      allOld(4),
      ['delete web-3 (update)', 'delete web-2 (update)'],
    ],
    [
      'rolling update, maxUnavailable 50% of 4',
      { ...parallel, replicas: 4, ...rolling({ maxUnavailable: '50%' }) },
      allOld(4),
      ['delete web-3 (update)', 'delete web-2 (update)'],
    ],
    [
      'rolling update: a pod unready at the stable revision uses up budget and waits its turn (no heal)',
      { ...parallel, replicas: 4, ...rolling({ maxUnavailable: 2 }) },
      [
        [0, 'unready', 'old'],
        [1, 'ready', 'old'],
        [2, 'ready', 'old'],
        [3, 'ready', 'old'],
      ],
      ['delete web-3 (update)'],
    ],
    [
      'OrderedReady blocked on a pod unready at the stable revision: the rollout waits for it (upstream)',
      { ...ordered, replicas: 3 },
      seq(['ready', 'old'], ['unready', 'old'], ['ready', 'old']),
      [],
    ],
    [
      'OrderedReady blocked on an unready pod at the update revision: it is waited on',
      { ...ordered, replicas: 3 },
      seq(['ready', 'old'], ['unready', 'new'], ['ready', 'old']),
      [],
    ],
    [
      'Parallel: a readiness dip at the stable revision restarts nothing beyond maxUnavailable',
      { ...parallel, replicas: 3, ...rolling({ maxUnavailable: 1 }) },
      seq(['ready', 'old'], ['unready', 'old'], ['unready', 'old']),
      [],
    ],
    ['paused: no pod heals', { ...parallel, replicas: 2, ...rolling({ paused: true }) }, seq(['unready', 'old'], ['unready', 'old']), []],
    [
      'unready pods at the stable revision do not heal, below the partition or not',
      { ...parallel, replicas: 3, ...rolling({ partition: 2 }) },
      seq(['unready', 'old'], ['unready', 'old'], ['unready', 'old']),
      [],
    ],
    [
      'rolling update: skips updated pods, continues below',
      { ...parallel, replicas: 3 },
      [
        [0, 'ready', 'old'],
        [1, 'ready', 'old'],
        [2, 'ready', 'new'],
      ],
      ['delete web-1 (update)'],
    ],
    [
      'rolling update waits for the updated pod to be available',
      { ...parallel, replicas: 3 },
      [
        [0, 'ready', 'old'],
        [1, 'ready', 'old'],
        [2, 'unready', 'new'],
      ],
      [],
    ],
    [
      'rolling update respects the partition',
      { ...parallel, replicas: 4, ...rolling({ partition: 2, maxUnavailable: 4 }) },
      allOld(4),
      ['delete web-3 (update)', 'delete web-2 (update)'],
    ],
    ['paused: no update, scaling goes on', { ...parallel, replicas: 4, ...rolling({ paused: true }) }, allOld(3), ['create web-3']],
    ['OnDelete: no update', { ...parallel, replicas: 3, updateStrategy: { type: 'OnDelete' } }, allOld(3), []],
  ])('%s', (_name, spec, pods, expected) => {
    const p = planned(world(spec, pods), NOW);
    expect(summary(p.actions).filter((s) => !s.startsWith('event'))).toEqual(expected);
  });

  it('creates new pods below the partition from the current revision, above it from the update revision', () => {
    const obs = world({ ...parallel, replicas: 4, ...rolling({ partition: 2 }) }, []);
    const p = planned(obs, NOW);
    const revs = p.actions.flatMap((a) => (a.kind === 'createPod' ? [[a.ordinal, a.revision === obs.app.status?.currentRevision ? 'current' : 'update']] : []));
    expect(revs).toEqual([
      [0, 'current'],
      [1, 'current'],
      [2, 'update'],
      [3, 'update'],
    ]);
  });

  it('does nothing but status while the App is being deleted', () => {
    const p = planned(world({ ...parallel, replicas: 1 }, allOld(3), { deleting: true }), NOW);
    expect(p.actions).toEqual([]);
    expect(p.status.replicas).toBe(3);
  });

  it('an invalid spec: InvalidSpec, one Event, no other action', () => {
    const obs = world({ ...parallel, replicas: 2, selector: { matchLabels: { app: 'nope' } } }, []);
    const p = planned(obs, NOW);
    expect(summary(p.actions)).toEqual(['event InvalidSpec']);
    expect(p.status.conditions).toContainEqual(expect.objectContaining({ type: 'InvalidSpec', status: 'True', reason: 'SpecInvalid' }));
    const again = planned({ ...obs, app: { ...obs.app, status: p.status } }, NOW);
    expect(again.actions).toEqual([]);
  });

  describe('claims read only when needed', () => {
    const vct = { ...ordered, replicas: 1, volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }] } as Partial<AppSpec>;
    const current = (obs: Observed): Observed => ({
      ...obs,
      app: { ...obs.app, status: { ...obs.app.status, observedGeneration: obs.app.metadata.generation } },
    });

    it('an unscheduled pending pod whose claim is gone: the claims are needed, then the claim is created', () => {
      const obs = current(world(vct, [[0, 'pending', 'new']]));
      expect(plan({ ...obs, claims: undefined }, NOW)).toEqual({ needs: 'claims' });
      expect(planned(obs, NOW).actions.map((a) => a.kind)).toEqual(['createPvc']);
    });

    it('a scheduled pending pod: its claims are in use, nothing to read', () => {
      const obs = current(world(vct, [[0, 'pending', 'new']]));
      const pod = obs.pods[0]!;
      pod.spec = { ...pod.spec, nodeName: 'node-a' };
      const p = planned({ ...obs, claims: undefined }, NOW);
      expect(p.actions).toEqual([]);
    });

    it('a missing pod or a spec change needs them; a steady App does not', () => {
      expect(plan({ ...current(world(vct, [])), claims: undefined }, NOW)).toEqual({ needs: 'claims' });
      expect(plan({ ...world(vct, allNew(1)), claims: undefined }, NOW)).toEqual({ needs: 'claims' });
      expect(plan({ ...current(world(vct, allNew(1))), claims: undefined }, NOW)).not.toHaveProperty('needs');
    });
  });

  it('status counts and the completed rollout', () => {
    const obs = world({ ...parallel, replicas: 3 }, [
      [0, 'ready', 'new'],
      [1, 'ready', 'new'],
      [2, 'unready', 'new'],
    ]);
    const p = planned(obs, NOW);
    expect(p.status).toMatchObject({
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      updatedReplicas: 3,
      updatedReadyReplicas: 2,
      currentReplicas: 0,
      labelSelector: 'app=web',
    });
    expect(p.status.currentRevision).not.toBe(p.status.updateRevision);
    const done = planned(world({ ...parallel, replicas: 3 }, allNew(3)), NOW);
    expect(done.status.currentRevision).toBe(done.status.updateRevision);
    expect(done.status.currentReplicas).toBe(3);
  });

  it('returns a wait until the next pod becomes available under minReadySeconds', () => {
    const obs = world({ ...ordered, replicas: 2, minReadySeconds: 60 }, []);
    obs.pods = [podFor(obs.app, 0, obs.app.status?.updateRevision ?? '', 'ready', '2025-05-31T23:59:30Z')];
    const p = planned(obs, NOW);
    expect(p.actions).toEqual([]);
    expect(p.wait).toEqual({ reason: 'min-ready-seconds', afterMs: 30_000 });
  });
});
