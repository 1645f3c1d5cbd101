import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../api/app-spec.ts';
import type { PriorityStrategy } from '../../../api/priority.ts';
import { parallel, rolling, rolloutWorld, summary, type PodRow } from '../../../../test/unit/app/rollout-world.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';
import { comparePriority, trailingInteger } from './update-order.ts';

const NOW = new Date('2025-06-01T00:00:00Z');

const weights: PriorityStrategy = {
  weightPriority: [
    { weight: 50, matchSelector: { matchLabels: { zone: 'a' } } },
    { weight: 30, matchSelector: { matchLabels: { role: 'leader' } } },
  ],
};
const order: PriorityStrategy = { orderPriority: [{ orderedKey: 'rank' }] };
const twoKeys: PriorityStrategy = { orderPriority: [{ orderedKey: 'a' }, { orderedKey: 'b' }] };
const byPriority = (priorityStrategy: PriorityStrategy, ru: object = {}): Partial<AppSpec> => ({
  ...parallel,
  replicas: 4,
  ...rolling({ maxUnavailable: 4, unorderedUpdate: { priorityStrategy }, ...ru }),
});

/** web-0 80, web-1 50, web-2 0, web-3 30 under `weights`. */
const weighted: PodRow[] = [
  [0, 'ready', 'old', { zone: 'a', role: 'leader' }],
  [1, 'ready', 'old', { zone: 'a' }],
  [2, 'ready', 'old'],
  [3, 'ready', 'old', { role: 'leader' }],
];
/** web-1 "sts-10", web-0 "1", web-2 "leader" (ignored), web-3 no label. */
const ranked: PodRow[] = [
  [0, 'ready', 'old', { rank: '1' }],
  [1, 'ready', 'old', { rank: 'sts-10' }],
  [2, 'ready', 'old', { rank: 'leader' }],
  [3, 'ready', 'old'],
];

describe('trailingInteger', () => {
  it.each<[string, number | undefined]>([
    ['5', 5],
    ['db-10', 10],
    ['007', 7],
    ['v2-3', 3],
    ['leader', undefined],
    ['10a', undefined],
    ['', undefined],
  ])('%j → %s', (value, expected) => {
    expect(trailingInteger(value)).toBe(expected);
  });
});

describe('comparePriority', () => {
  const pod = (ordinal: number, labels: Record<string, string> = {}) => ({ ordinal, labels });
  it.each<[string, PriorityStrategy, ReturnType<typeof pod>[], number[]]>([
    ['weights are summed, highest first', weights, [pod(0, { zone: 'a' }), pod(1, { zone: 'a', role: 'leader' }), pod(2, { role: 'leader' })], [1, 0, 2]],
    ['equal weights: highest ordinal first', weights, [pod(0), pod(1), pod(2, { zone: 'a' })], [2, 1, 0]],
    [
      'an empty selector weighs on every pod',
      {
        weightPriority: [
          { weight: 10, matchSelector: {} },
          { weight: 5, matchSelector: { matchLabels: { x: 'y' } } },
        ],
      },
      [pod(1), pod(0, { x: 'y' })],
      [0, 1],
    ],
    ['order: highest integer first', order, [pod(0, { rank: '2' }), pod(1, { rank: 'r-30' }), pod(2, { rank: '4' })], [1, 2, 0]],
    ['order: unlabelled and non-numeric pods go last, highest ordinal first', order, [pod(3), pod(0, { rank: 'x' }), pod(1, { rank: '1' })], [1, 3, 0]],
    ['order: an earlier key outranks any value of a later one', twoKeys, [pod(0, { b: '100' }), pod(1, { a: '1' }), pod(2, { a: '2' })], [2, 1, 0]],
    ['order: a non-numeric first key falls through to the next', twoKeys, [pod(0, { a: 'x', b: '1' }), pod(1), pod(2, { b: '0' })], [0, 2, 1]],
  ])('%s', (_name, strategy, pods, expected) => {
    expect([...pods].sort((a, b) => comparePriority(strategy, a, b)).map((p) => p.ordinal)).toEqual(expected);
  });
});

describe('plan with a priority strategy', () => {
  it.each<[string, Partial<AppSpec>, PodRow[], string[]]>([
    ['weights: the heaviest pod first (maxUnavailable 1)', byPriority(weights, { maxUnavailable: 1 }), weighted, ['delete web-0 (update)']],
    [
      'weights: every pod within the budget, in priority order',
      byPriority(weights),
      weighted,
      ['delete web-0 (update)', 'delete web-1 (update)', 'delete web-3 (update)', 'delete web-2 (update)'],
    ],
    [
      'order: integers highest first, then the rest by ordinal',
      byPriority(order),
      ranked,
      ['delete web-1 (update)', 'delete web-0 (update)', 'delete web-3 (update)', 'delete web-2 (update)'],
    ],
    [
      'no label matches: as without priority, highest ordinal first',
      byPriority(order, { maxUnavailable: 2 }),
      weighted,
      ['delete web-3 (update)', 'delete web-2 (update)'],
    ],
    [
      'the partition counts pods: 2 of 4 stay, the lowest priorities',
      byPriority(weights, { partition: 2 }),
      weighted,
      ['delete web-0 (update)', 'delete web-1 (update)'],
    ],
    [
      'the partition counts pods already updated',
      byPriority(weights, { partition: 2 }),
      [weighted[0]!, weighted[1]!, [2, 'ready', 'new'], weighted[3]!],
      ['delete web-0 (update)'],
    ],
    [
      'maxUnavailable: a pod unready at the stable revision uses up the budget and waits its turn',
      byPriority(weights, { maxUnavailable: 2 }),
      [weighted[0]!, weighted[1]!, [2, 'unready', 'old'], weighted[3]!],
      ['delete web-0 (update)'],
    ],
    ['paused: nothing', byPriority(weights, { paused: true }), weighted, []],
    [
      'a missing pod takes a slot before the outdated ones (a pod deleted for its update comes back updated)',
      byPriority(weights, { partition: 3 }),
      [weighted[0]!, [1, 'terminating', 'old'], weighted[2]!, weighted[3]!],
      [],
    ],
    [
      'a missing pod within the count is created at the update revision',
      byPriority(weights, { partition: 3 }),
      [weighted[0]!, weighted[2]!, weighted[3]!],
      ['create web-1 (update)'],
    ],
    [
      'a missing pod beyond the count is created at the current revision',
      byPriority(weights, { partition: 3 }),
      [[0, 'ready', 'new'], weighted[2]!, weighted[3]!],
      ['create web-1 (current)'],
    ],
  ])('%s', (_name, spec, pods, expected) => {
    const obs = rolloutWorld(spec, pods);
    const p = planned(obs, NOW);
    expect(summary(p.actions, obs.app.status?.updateRevision).filter((s) => !s.startsWith('event'))).toEqual(expected);
  });

  it('a canary step of one pod updates the highest-priority pod, then pauses', () => {
    const spec = byPriority(weights, { canary: { steps: [{ replicas: 1 }, { pause: {} }] } });
    const first = planned(rolloutWorld(spec, weighted), NOW);
    expect(summary(first.actions).filter((s) => !s.startsWith('event'))).toEqual(['delete web-0 (update)']);
    const reached = planned(rolloutWorld(spec, [[0, 'ready', 'new'], ...weighted.slice(1)]), NOW);
    expect(summary(reached.actions)).toEqual(['pauseRollout', 'event CanaryPaused']);
    expect(reached.status.canary?.step).toBe(1);
  });

  it('an ignored (non-numeric) ordered-key value: condition PriorityLabelIgnored True and one Event; False once no such pod is left', () => {
    const obs = rolloutWorld(byPriority(order, { maxUnavailable: 1 }), ranked);
    const p = planned(obs, NOW);
    expect(summary(p.actions)).toContain('event PriorityLabelIgnored');
    const ignored = p.status.conditions?.find((c) => c.type === 'PriorityLabelIgnored');
    expect(ignored).toMatchObject({ status: 'True', reason: 'NonNumericPriority' });
    expect(ignored?.message).toContain('web-2 (rank="leader")');
    expect(ignored?.message).not.toContain('web-0');

    const again = planned({ ...obs, app: { ...obs.app, status: p.status } }, NOW);
    expect(summary(again.actions)).not.toContain('event PriorityLabelIgnored');

    const updated = rolloutWorld(byPriority(order, { maxUnavailable: 1 }), [ranked[0]!, ranked[1]!, [2, 'ready', 'new', { rank: 'leader' }], ranked[3]!], {
      conditions: p.status.conditions,
    });
    const cleared = planned(updated, NOW).status.conditions?.find((c) => c.type === 'PriorityLabelIgnored');
    expect(cleared).toMatchObject({ status: 'False', reason: 'PriorityLabelsNumeric' });
  });

  it('numeric values only: no PriorityLabelIgnored condition at all', () => {
    const p = planned(rolloutWorld(byPriority(order), [ranked[0]!, ranked[1]!]), NOW);
    expect(p.status.conditions?.some((c) => c.type === 'PriorityLabelIgnored')).toBe(false);
  });
});
