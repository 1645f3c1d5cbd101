import { describe, expect, it } from 'vitest';
import type { QueueStatus, Status } from '../../queue/status.ts';
import { describeJobData, formatAge, formatRetryFailed, formatStatus, statusJson } from './format.ts';

const NOW = 1_800_000_000_000;

function queue(over: Partial<QueueStatus>): QueueStatus {
  return {
    name: 'reconcile',
    shard: 0,
    slot: 4407,
    paused: false,
    counts: { wait: 0, active: 0, delayed: 0, prioritized: 0, 'waiting-children': 0, failed: 0, completed: 0 },
    oldestWaitingAt: undefined,
    failed: [],
    workers: 0,
    globalConcurrency: null,
    globalRateLimit: null,
    ...over,
  };
}

describe('formatAge', () => {
  it.each([
    [0, '0s'],
    [999, '0s'],
    [45_000, '45s'],
    [192_000, '3m12s'],
    [7_500_000, '2h5m'],
    [273_600_000, '3d4h'],
    [-5, '0s'],
  ])('%i ms is %s', (ms, text) => {
    expect(formatAge(ms)).toBe(text);
  });
});

describe('describeJobData', () => {
  it('names an object, a timer, or shows the payload', () => {
    expect(describeJobData({ kind: 'App', namespace: 'shop', name: 'web' })).toBe('App shop/web');
    expect(describeJobData({ kind: 'ImageList', namespace: '', name: 'node-1' })).toBe('ImageList node-1');
    expect(describeJobData({ key: { kind: 'App', namespace: 'shop', name: 'web' }, reason: 'canary', dueAt: 1 })).toBe('App shop/web (timer canary)');
    expect(describeJobData({ odd: true })).toBe('{"odd":true}');
    expect(describeJobData(undefined)).toBe('undefined');
  });
});

describe('formatStatus', () => {
  const status: Status = {
    at: NOW,
    overrides: { globalConcurrency: 3 },
    queues: [
      queue({
        paused: true,
        counts: { wait: 4, active: 1, delayed: 2, prioritized: 7, 'waiting-children': 0, failed: 12, completed: 30 },
        oldestWaitingAt: NOW - 125_000,
        workers: 2,
        globalConcurrency: 3,
        globalRateLimit: { max: 50, durationMs: 1000 },
        failed: [
          {
            id: 'App.shop.web.abc',
            data: { kind: 'App', namespace: 'shop', name: 'web' },
            attempts: 20,
            failedAt: NOW - 60_000,
            lastError: 'connect ECONNREFUSED\n  at x',
          },
        ],
      }),
      queue({ name: 'timers', counts: { wait: 0, active: 0, delayed: 5, prioritized: 0, 'waiting-children': 0, failed: 0, completed: 0 } }),
    ],
  };
  const text = formatStatus(status);
  const lines = text.split('\n');

  it('prints one row of counts per queue under a header', () => {
    expect(lines[0]).toMatch(/^QUEUE\s+STATE\s+WAIT\s+PRIORITIZED\s+ACTIVE\s+DELAYED\s+FAILED\s+COMPLETED\s+WORKERS\s+OLDEST WAITING$/);
    expect(lines[1]).toMatch(/^reconcile\s+paused\s+4\s+7\s+1\s+2\s+12\s+30\s+2\s+2m5s ago$/);
    expect(lines[2]).toMatch(/^timers\s+running\s+0\s+0\s+0\s+5\s+0\s+0\s+0\s+-$/);
  });

  it('says where each limit comes from', () => {
    expect(text).toContain('global concurrency: 3 (set with ebb queue)');
    expect(text).toContain("global rate limit:  50/1s (watcher's setting)");
  });

  it('lists failed jobs with their last error (first line) and says the queue is paused', () => {
    expect(text).toContain('failed reconcile jobs (1 of 12, newest first):');
    expect(text).toContain('  App shop/web  job App.shop.web.abc, 20 attempts, 1m0s ago: connect ECONNREFUSED\n');
    expect(text).toContain('reconcile is paused');
    expect(text).not.toContain('failed timers jobs');
  });

  it('shows no limit as none and no paused note for a running queue', () => {
    const plain = formatStatus({ at: NOW, overrides: { globalRateLimit: null }, queues: [queue({})] });
    expect(plain).toContain("global concurrency: none (watcher's setting)");
    expect(plain).toContain('global rate limit:  none (set with ebb queue)');
    expect(plain).not.toContain('paused');
  });

  it('has a JSON form with the same facts', () => {
    const parsed = JSON.parse(statusJson(status)) as Status;
    expect(parsed.queues[0]?.counts.failed).toBe(12);
    expect(parsed.overrides).toEqual({ globalConcurrency: 3 });
  });
});

describe('formatStatus with queue shards', () => {
  const counts = (wait: number, delayed: number): QueueStatus['counts'] => ({
    wait,
    active: 0,
    delayed,
    prioritized: 0,
    'waiting-children': 0,
    failed: 0,
    completed: 0,
  });
  const status: Status = {
    at: NOW,
    overrides: {},
    queues: [
      queue({ shard: 0, slot: 4407, counts: counts(2, 0), workers: 2, globalConcurrency: 4 }),
      queue({ shard: 1, slot: 11762, counts: counts(5, 1), workers: 2, globalConcurrency: 3, oldestWaitingAt: NOW - 10_000 }),
      queue({ name: 'timers', shard: 0, slot: 4407, counts: counts(0, 3) }),
      queue({ name: 'timers', shard: 1, slot: 11762, counts: counts(0, 4) }),
    ],
  };
  const lines = formatStatus(status).split('\n');

  it('prints each queue summed over its shards, then one row per shard with its Cluster slot', () => {
    expect(lines[0]).toMatch(/^QUEUE\s+SHARD\s+SLOT\s+STATE\s+WAIT\s/);
    expect(lines[1]).toMatch(/^reconcile\s+all\s+-\s+running\s+7\s+0\s+0\s+1\s+0\s+0\s+2\s+10s ago$/);
    expect(lines[2]).toMatch(/^reconcile\s+0\s+4407\s+running\s+2\s/);
    expect(lines[3]).toMatch(/^reconcile\s+1\s+11762\s+running\s+5\s/);
    expect(lines[4]).toMatch(/^timers\s+all\s+-\s+running\s+0\s+0\s+0\s+7\s/);
  });

  it('shows the global limit as the sum of the shards and adds totals to the JSON', () => {
    expect(lines).toContain("global concurrency: 7 (watcher's setting)");
    const parsed = JSON.parse(statusJson(status)) as { totals: QueueStatus[] };
    expect(parsed.totals.map((t) => [t.name, t.counts.wait, t.counts.delayed])).toEqual([
      ['reconcile', 7, 1],
      ['timers', 0, 7],
    ]);
  });
});

describe('formatRetryFailed', () => {
  it('says what happened', () => {
    expect(formatRetryFailed({ failed: 0, added: 0, merged: 0, unreadable: 0 })).toBe('no failed jobs\n');
    expect(formatRetryFailed({ failed: 3, added: 1, merged: 1, unreadable: 1 })).toBe(
      '3 failed jobs: 1 reconcile enqueued, 1 merged into pending jobs, 1 failed job without an object key left in place\n',
    );
  });
});
