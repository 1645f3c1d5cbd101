/** The planner's decisions for reserved ordinals (`spec.reserveOrdinals`), as tables. */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../api/app-spec.ts';
import { stored } from '../../../test/unit/app/fixtures.ts';
import { NOW, ordered, parallel, progressing, ready, rolling, summary, world, type PodRow } from '../../../test/unit/app/plan-table.ts';
import { planned } from '../../../test/unit/app/fixtures.ts';

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
    expect(summary(planned(world(spec, pods), NOW).actions)).toEqual(expected);
  });

  it('status counts the pods that run: replicas 4 with [1] is complete at 0, 2, 3, 4', () => {
    const obs = world({ ...parallel, replicas: 4, reserveOrdinals: [1] }, ready([0, 2, 3, 4]));
    const p = planned(obs, NOW);
    expect(p.actions.filter((a) => a.kind === 'createPod' || a.kind === 'deletePod')).toEqual([]);
    expect(p.status).toMatchObject({ replicas: 4, readyReplicas: 4, availableReplicas: 4, updatedReplicas: 4 });
    expect(progressing(obs)).toMatchObject({ status: 'False', reason: 'RolloutComplete' });
  });

  it('partition stays an ordinal: replicas above it are updated, the reserved one is not counted', () => {
    const obs = world({ ...parallel, replicas: 3, reserveOrdinals: [1], ...rolling({ partition: 2, maxUnavailable: 3 }) }, ready([0, 2, 3], 'old'));
    expect(summary(planned(obs, NOW).actions)).toEqual(['delete web-3 (update)', 'delete web-2 (update)']);
  });

  it('a canary step counts replicas, not ordinals: 1 pod means the highest replica', () => {
    const obs = world(
      { ...parallel, replicas: 3, reserveOrdinals: [2], ...rolling({ maxUnavailable: 3, canary: { steps: [{ replicas: 1 }, { pause: {} }] } }) },
      ready([0, 1, 3], 'old'),
    );
    expect(summary(planned(obs, NOW).actions)).toEqual(['delete web-3 (update)']);
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
    const actions = planned(obs, NOW).actions;
    const owners = actions.find((a) => a.kind === 'setPvcOwners');
    expect(owners).toMatchObject({ name: 'data-web-1', ownerReferences: [expect.objectContaining({ kind: 'Pod', name: 'web-1' })] });
    expect(actions.findIndex((a) => a.kind === 'setPvcOwners')).toBeLessThan(actions.findIndex((a) => a.kind === 'deletePod'));
    expect(summary(actions)).toEqual(['delete web-1 (reserved)']);
  });

  it('a reserved range pushing the highest ordinal past int32 is an invalid spec', () => {
    const p = planned(world({ ...parallel, replicas: 2, reserveOrdinals: ['1-2147483647'] }, []), NOW);
    expect(p.actions.filter((a) => a.kind === 'createPod')).toEqual([]);
    expect(p.status.conditions).toContainEqual(expect.objectContaining({ type: 'InvalidSpec', status: 'True' }));
  });
});
