/** The planner's decisions for reserved ordinals, the specified-delete label and the scale-up limit, as tables. */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../api/app-spec.ts';
import { SPECIFIED_DELETE_LABEL } from '../../api/specified-delete.ts';
import { makeApp, podFor, type PodState, stored } from '../../../test/unit/app/fixtures.ts';
import type { Action } from './actions.ts';
import type { ControllerRevision, Stored } from '../../kube/types.ts';
import { plan, type Observed } from './planner.ts';
import { newRevision, revisionData } from './revisions.ts';

const NOW = new Date('2025-06-01T00:00:00Z');
const v = (tag: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: `web:${tag}` }] } });

function revisionOf(spec: Partial<AppSpec>, n: number): Stored<ControllerRevision> {
  const app = makeApp('web', spec);
  return stored<ControllerRevision>(newRevision(app, revisionData(app), n, 0), `rev-${n}`);
}

/** [ordinal, state, revision, labelled specified-delete] */
type PodRow = [number, PodState, 'old' | 'new', boolean?];

/** An App at template v2 (update revision) whose current revision is v1. */
function world(spec: Partial<AppSpec>, pods: PodRow[]): Observed {
  const oldRev = revisionOf({ ...spec, template: v('v1') }, 1);
  const newRev = revisionOf({ ...spec, template: v('v2') }, 2);
  const app = makeApp('web', { ...spec, template: v('v2') });
  app.status = { currentRevision: oldRev.metadata.name, updateRevision: newRev.metadata.name };
  return {
    app,
    pods: pods.map(([o, state, r, labelled]) => {
      const pod = podFor(app, o, (r === 'old' ? oldRev : newRev).metadata.name, state);
      if (labelled) pod.metadata.labels = { ...pod.metadata.labels, [SPECIFIED_DELETE_LABEL]: 'true' };
      return pod;
    }),
    revisions: [oldRev, newRev],
    claims: [],
  };
}

const summary = (actions: Action[]): string[] =>
  actions.flatMap((a) => {
    switch (a.kind) {
      case 'createPod':
        return [`create ${a.pod.metadata.name}`];
      case 'deletePod':
        return [`delete ${a.name} (${a.cause})`];
      case 'event':
        // The fixtures' rollout completes as a side effect in some rows: not what these tables are about.
        return a.event.reason === 'RolloutComplete' ? [] : [`event ${a.event.reason}`];
      case 'inPlaceStep':
        return [`inPlace ${a.name}`];
      default:
        return [];
    }
  });

const ordered = { podManagementPolicy: 'OrderedReady' } as const;
const parallel = { podManagementPolicy: 'Parallel' } as const;
const rolling = (ru: object) => ({ updateStrategy: { type: 'RollingUpdate' as const, rollingUpdate: ru } });
const ready = (ordinals: number[], r: 'old' | 'new' = 'new'): PodRow[] => ordinals.map((o) => [o, 'ready', r]);
const progressing = (obs: Observed) => plan(obs, NOW).status.conditions?.find((c) => c.type === 'Progressing');

describe('reserved ordinals', () => {
  it.each<[string, Partial<AppSpec>, PodRow[], string[]]>([
    [
      'replicas 4, [1], no pods: 0, 2, 3, 4',
      { ...parallel, replicas: 4, reserveOrdinals: [1] },
      [],
      ['create web-0', 'create web-2', 'create web-3', 'create web-4'],
    ],
    [
      'a running pod at a reserved ordinal goes, its replacement ordinal comes (Parallel: both at once)',
      { ...parallel, replicas: 4, reserveOrdinals: [1] },
      ready([0, 1, 2, 3]),
      ['create web-4', 'delete web-1 (reserved)'],
    ],
    [
      'OrderedReady: the new ordinal first, the reserved pod only once every replica is ready',
      { ...ordered, replicas: 4, reserveOrdinals: [1] },
      ready([0, 1, 2, 3]),
      ['create web-4'],
    ],
    ['OrderedReady: then the reserved pod', { ...ordered, replicas: 4, reserveOrdinals: [1] }, ready([0, 1, 2, 3, 4]), ['delete web-1 (reserved)']],
    [
      'OrderedReady: reserved pods go highest first, one at a time',
      { ...ordered, replicas: 2, reserveOrdinals: ['1-2'] },
      ready([0, 1, 2, 3]),
      ['delete web-2 (reserved)'],
    ],
    ['a reserved ordinal above replicas changes nothing', { ...ordered, replicas: 3, reserveOrdinals: [10] }, ready([0, 1, 2]), []],
    ['overlapping ranges: their union', { ...parallel, replicas: 3, reserveOrdinals: ['1-3', '2-4', 3] }, [], ['create web-0', 'create web-5', 'create web-6']],
    [
      'with ordinals.start: reserved ordinals are pod ordinals, one below start is ignored',
      { ...parallel, replicas: 3, ordinals: { start: 5 }, reserveOrdinals: [2, '6-7'] },
      [],
      ['create web-5', 'create web-8', 'create web-9'],
    ],
    [
      'scale-down with a reservation: the highest replica goes, the reserved pod too',
      { ...parallel, replicas: 2, reserveOrdinals: [1] },
      ready([0, 1, 2, 3]),
      ['delete web-3 (condemned)', 'delete web-1 (reserved)'],
    ],
  ])('%s', (_, spec, pods, expected) => {
    expect(summary(plan(world(spec, pods), NOW).actions)).toEqual(expected);
  });

  it('status counts the pods that run: replicas 4 with [1] is complete at 0, 2, 3, 4', () => {
    const obs = world({ ...parallel, replicas: 4, reserveOrdinals: [1] }, ready([0, 2, 3, 4]));
    const p = plan(obs, NOW);
    expect(p.actions.filter((a) => a.kind === 'createPod' || a.kind === 'deletePod')).toEqual([]);
    expect(p.status).toMatchObject({ replicas: 4, readyReplicas: 4, availableReplicas: 4, updatedReplicas: 4 });
    expect(progressing(obs)).toMatchObject({ status: 'False', reason: 'RolloutComplete' });
  });

  it('partition stays an ordinal: replicas above it are updated, the reserved one is not counted', () => {
    const obs = world({ ...parallel, replicas: 3, reserveOrdinals: [1], ...rolling({ partition: 2, maxUnavailable: 3 }) }, ready([0, 2, 3], 'old'));
    expect(summary(plan(obs, NOW).actions)).toEqual(['delete web-3 (update)', 'delete web-2 (update)']);
  });

  it('a canary step counts replicas, not ordinals: 1 pod means the highest replica', () => {
    const obs = world(
      { ...parallel, replicas: 3, reserveOrdinals: [2], ...rolling({ maxUnavailable: 3, canary: { steps: [{ replicas: 1 }, { pause: {} }] } }) },
      ready([0, 1, 3], 'old'),
    );
    expect(summary(plan(obs, NOW).actions)).toEqual(['delete web-3 (update)']);
  });

  it('a reserved pod under whenScaled: Delete hands its claim to the pod before it goes', () => {
    const spec: Partial<AppSpec> = {
      ...parallel,
      replicas: 2,
      reserveOrdinals: [1],
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    };
    const obs = world(spec, ready([0, 1, 2]));
    obs.claims = [0, 1, 2].map((o) =>
      stored({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `data-web-${o}`, namespace: 'ns' } }, `c${o}`),
    );
    const actions = plan(obs, NOW).actions;
    const owners = actions.find((a) => a.kind === 'setPvcOwners');
    expect(owners).toMatchObject({ name: 'data-web-1', ownerReferences: [expect.objectContaining({ kind: 'Pod', name: 'web-1' })] });
    expect(actions.findIndex((a) => a.kind === 'setPvcOwners')).toBeLessThan(actions.findIndex((a) => a.kind === 'deletePod'));
    expect(summary(actions)).toEqual(['delete web-1 (reserved)']);
  });

  it('a reserved range pushing the highest ordinal past int32 is an invalid spec', () => {
    const p = plan(world({ ...parallel, replicas: 2, reserveOrdinals: ['1-2147483647'] }, []), NOW);
    expect(p.actions.filter((a) => a.kind === 'createPod')).toEqual([]);
    expect(p.status.conditions).toContainEqual(expect.objectContaining({ type: 'InvalidSpec', status: 'True' }));
  });
});

describe('specified-delete label', () => {
  it.each<[string, Partial<AppSpec>, PodRow[], string[]]>([
    [
      'a labelled pod is deleted, to be recreated',
      { ...parallel, replicas: 3 },
      [
        [0, 'ready', 'new'],
        [1, 'ready', 'new', true],
        [2, 'ready', 'new'],
      ],
      ['delete web-1 (specified)'],
    ],
    [
      'below the partition too',
      { ...parallel, replicas: 3, ...rolling({ partition: 3 }) },
      [[0, 'ready', 'old', true], ...ready([1, 2], 'old')],
      ['delete web-0 (specified)'],
    ],
    [
      'within maxUnavailable: the highest labelled first, the other waits',
      { ...parallel, replicas: 3 },
      [
        [0, 'ready', 'new', true],
        [1, 'ready', 'new'],
        [2, 'ready', 'new', true],
      ],
      ['delete web-2 (specified)', 'event SpecifiedDeletePending'],
    ],
    [
      'budget spent: an unavailable labelled pod still goes (it spends none), an available one waits',
      { ...parallel, replicas: 3 },
      [
        [0, 'unready', 'new', true],
        [1, 'ready', 'new'],
        [2, 'ready', 'new', true],
      ],
      ['delete web-0 (specified)', 'event SpecifiedDeletePending'],
    ],
    [
      'with budget: the available one spends it',
      { ...parallel, replicas: 3, ...rolling({ maxUnavailable: 2 }) },
      [
        [0, 'unready', 'new', true],
        [1, 'ready', 'new'],
        [2, 'ready', 'new', true],
      ],
      ['delete web-2 (specified)', 'delete web-0 (specified)'],
    ],
    [
      'a labelled pod already terminating: nothing more',
      { ...parallel, replicas: 2 },
      [
        [0, 'ready', 'new'],
        [1, 'terminating', 'new', true],
      ],
      [],
    ],
    [
      'a labelled failed pod is replaced as failed, once',
      { ...parallel, replicas: 2 },
      [
        [0, 'ready', 'new'],
        [1, 'failed', 'new', true],
      ],
      ['delete web-1 (failed)'],
    ],
    [
      'paused: left running, and said so',
      { ...parallel, replicas: 2, ...rolling({ paused: true }) },
      [
        [0, 'ready', 'new'],
        [1, 'ready', 'new', true],
      ],
      ['event SpecifiedDeletePending'],
    ],
    [
      'it takes the budget the rolling update would have used',
      { ...parallel, replicas: 3 },
      [[0, 'ready', 'old', true], ...ready([1, 2], 'old')],
      ['delete web-0 (specified)'],
    ],
    [
      'a labelled pod at a reserved ordinal is deleted as reserved',
      { ...parallel, replicas: 2, reserveOrdinals: [1] },
      [
        [0, 'ready', 'new'],
        [1, 'ready', 'new', true],
        [2, 'ready', 'new'],
      ],
      ['delete web-1 (reserved)'],
    ],
  ])('%s', (_, spec, pods, expected) => {
    expect(summary(plan(world(spec, pods), NOW).actions)).toEqual(expected);
  });

  it('the replacement is dry-run with the revision its ordinal should have', () => {
    const obs = world({ ...parallel, replicas: 3, ...rolling({ partition: 2 }) }, [[0, 'ready', 'new', true], ...ready([1, 2], 'new')]);
    const del = plan(obs, NOW).actions.find((a) => a.kind === 'deletePod');
    expect(del).toMatchObject({ cause: 'specified', replacement: { revision: obs.app.status?.currentRevision } });
    expect(del?.kind === 'deletePod' ? del.replacement?.pod.metadata.labels?.[SPECIFIED_DELETE_LABEL] : 'missing').toBeUndefined();
  });

  it('a pod waiting shows in Progressing, with the reason', () => {
    const obs = world({ ...parallel, replicas: 2, ...rolling({ paused: true }) }, [
      [0, 'ready', 'new'],
      [1, 'ready', 'new', true],
    ]);
    expect(progressing(obs)).toMatchObject({
      status: 'True',
      reason: 'SpecifiedDeletePending',
      message: 'web-1 labelled for deletion, waiting: the rollout is paused',
    });
  });

  it('the Event once, not on every reconcile', () => {
    const obs = world({ ...parallel, replicas: 2, ...rolling({ paused: true }) }, [
      [0, 'ready', 'new'],
      [1, 'ready', 'new', true],
    ]);
    const first = plan(obs, NOW);
    const again = plan({ ...obs, app: { ...obs.app, status: first.status } }, NOW);
    expect(summary(again.actions)).toEqual([]);
  });

  it('an outdated labelled pod is recreated, not updated in place (only "true" counts)', () => {
    const obs = world({ ...parallel, replicas: 2, ...rolling({ podUpdatePolicy: 'InPlaceIfPossible' }) }, [
      [0, 'ready', 'new'],
      [1, 'ready', 'old', true],
    ]);
    const [first, second] = obs.pods;
    if (!first || !second) throw new Error('two pods');
    const notTrue = { ...second, metadata: { ...second.metadata, labels: { ...second.metadata.labels, [SPECIFIED_DELETE_LABEL]: 'false' } } };
    expect(summary(plan({ ...obs, pods: [first, notTrue] }, NOW).actions)).toEqual(['inPlace web-1']);
    expect(summary(plan(obs, NOW).actions)).toEqual(['delete web-1 (specified)']);
  });
});

describe('scaleStrategy.maxUnavailable', () => {
  it.each<[string, Partial<AppSpec>, PodRow[], string[]]>([
    ['no limit: every missing pod at once', { ...parallel, replicas: 4 }, [], ['create web-0', 'create web-1', 'create web-2', 'create web-3']],
    [
      'limit 2, no pods: two, the rest held',
      { ...parallel, replicas: 4, scaleStrategy: { maxUnavailable: 2 } },
      [],
      ['create web-0', 'create web-1', 'event ScaleUpLimited'],
    ],
    [
      'an unavailable pod takes a slot',
      { ...parallel, replicas: 4, scaleStrategy: { maxUnavailable: 2 } },
      [[0, 'pending', 'new']],
      ['create web-1', 'event ScaleUpLimited'],
    ],
    ['limit reached: nothing created', { ...parallel, replicas: 4, scaleStrategy: { maxUnavailable: 1 } }, [[0, 'unready', 'new']], ['event ScaleUpLimited']],
    ['available pods take none', { ...parallel, replicas: 4, scaleStrategy: { maxUnavailable: 1 } }, ready([0, 1]), ['create web-2', 'event ScaleUpLimited']],
    [
      'a percentage of replicas, rounded down',
      { ...parallel, replicas: 10, scaleStrategy: { maxUnavailable: '25%' } },
      [],
      ['create web-0', 'create web-1', 'event ScaleUpLimited'],
    ],
    ['a small percentage is still one', { ...parallel, replicas: 3, scaleStrategy: { maxUnavailable: '10%' } }, [], ['create web-0', 'event ScaleUpLimited']],
    [
      'pods being removed do not count',
      { ...parallel, replicas: 2, reserveOrdinals: [1], scaleStrategy: { maxUnavailable: 1 } },
      [
        [0, 'ready', 'new'],
        [1, 'terminating', 'new'],
      ],
      ['create web-2'],
    ],
  ])('%s', (_, spec, pods, expected) => {
    expect(summary(plan(world(spec, pods), NOW).actions)).toEqual(expected);
  });

  it('Progressing says what is held and why', () => {
    const obs = world({ ...parallel, replicas: 4, scaleStrategy: { maxUnavailable: 2 } }, [[0, 'pending', 'new']]);
    expect(progressing(obs)).toMatchObject({
      status: 'True',
      reason: 'ScaleUpLimited',
      message: "scaling to 4 pods: 1 exist; 2 not created yet while 1 of the App's pods are unavailable (scaleStrategy.maxUnavailable 2)",
    });
  });

  it('with OrderedReady (stored before admission refused it): an invalid spec', () => {
    const p = plan(world({ ...ordered, replicas: 2, scaleStrategy: { maxUnavailable: 1 } }, []), NOW);
    const invalid = p.status.conditions?.find((c) => c.type === 'InvalidSpec');
    expect(invalid?.status).toBe('True');
    expect(invalid?.message).toContain('requires podManagementPolicy: Parallel');
  });
});
