/** The planner's decisions under `scaleStrategy.maxUnavailable`, as tables. */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../api/app-spec.ts';
import { NOW, ordered, parallel, progressing, ready, summary, world, type PodRow } from '../../../../test/unit/app/plan-table.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';

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
    expect(summary(planned(world(spec, pods), NOW).actions)).toEqual(expected);
  });

  it('Progressing says what is held and why', () => {
    const obs = world({ ...parallel, replicas: 4, scaleStrategy: { maxUnavailable: 2 } }, [[0, 'pending', 'new']]);
    expect(progressing(obs)).toMatchObject({
      status: 'True',
      reason: 'ScaleUpLimited',
      message: "scaling to 4 pods: 2 exist; 2 not created yet while 2 of the App's pods are unavailable (scaleStrategy.maxUnavailable 2)",
    });
  });

  it('with OrderedReady (stored before admission refused it): an invalid spec', () => {
    const p = planned(world({ ...ordered, replicas: 2, scaleStrategy: { maxUnavailable: 1 } }, []), NOW);
    const invalid = p.status.conditions?.find((c) => c.type === 'InvalidSpec');
    expect(invalid?.status).toBe('True');
    expect(invalid?.message).toContain('requires podManagementPolicy: Parallel');
  });
});
