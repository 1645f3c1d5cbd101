import { describe, expect, it } from 'vitest';
import { sumBacklogs, type Backlog } from './backlog.ts';

const backlog = (over: Partial<Backlog>): Backlog => ({ wait: 0, prioritized: 0, active: 0, delayedDueSoon: 0, paused: false, total: 0, ...over });

describe('sumBacklogs', () => {
  it('adds the shards up: KEDA sees the work of every shard', () => {
    const sum = sumBacklogs([
      backlog({ wait: 2, active: 1, total: 3, growsAt: 5_000 }),
      backlog({ prioritized: 4, delayedDueSoon: 1, total: 5, growsAt: 2_000 }),
      backlog({ paused: true }),
    ]);
    expect(sum).toEqual({ wait: 2, prioritized: 4, active: 1, delayedDueSoon: 1, paused: false, total: 8, growsAt: 2_000 });
  });

  it('is paused only when every shard is, and has no growsAt when no shard has one', () => {
    expect(sumBacklogs([backlog({ paused: true }), backlog({ paused: true })])).toEqual(backlog({ paused: true }));
    expect(sumBacklogs([backlog({ total: 1, wait: 1 })])).not.toHaveProperty('growsAt');
  });
});
