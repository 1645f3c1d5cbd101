/** The planner's decisions for pods labelled specified-delete, as tables. */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../api/app-spec.ts';
import { SPECIFIED_DELETE_LABEL } from '../../../api/specified-delete.ts';
import { NOW, parallel, progressing, ready, rolling, summary, world, type PodRow } from '../../../../test/unit/app/plan-table.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';

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
    expect(summary(planned(world(spec, pods), NOW).actions)).toEqual(expected);
  });

  it('the replacement is dry-run with the revision its ordinal should have', () => {
    const obs = world({ ...parallel, replicas: 3, ...rolling({ partition: 2 }) }, [[0, 'ready', 'new', true], ...ready([1, 2], 'new')]);
    const del = planned(obs, NOW).actions.find((a) => a.kind === 'deletePod');
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
    const first = planned(obs, NOW);
    const again = planned({ ...obs, app: { ...obs.app, status: first.status } }, NOW);
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
    expect(summary(planned({ ...obs, pods: [first, notTrue] }, NOW).actions)).toEqual(['inPlace web-1']);
    expect(summary(planned(obs, NOW).actions)).toEqual(['delete web-1 (specified)']);
  });
});
