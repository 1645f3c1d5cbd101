/**
 * Tenant fairness against a real Redis: a quiet namespace's change overtakes a flooding namespace's backlog
 * (and does not with fairness off), while every object still gets exactly one job and the backlog drains.
 */
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { TenantRates, type Fairness } from '../../../src/queue/fairness.ts';
import { dedupId, RECONCILE_QUEUE, type ObjectKey } from '../../../src/queue/names.ts';
import { reconcileWorkerOptions } from '../../../src/queue/queues.ts';
import { useRedis } from './support.ts';

const redis = useRedis();
const FLOOD = 1000;
/** 1,001 jobs through a real Redis: a few seconds on a quiet machine, many times that on a loaded one. */
const DRAIN_MS = 90_000;
const TEST_TIMEOUT_MS = DRAIN_MS + 30_000;

/** Enqueues A's flood, then B's one edit, on a paused queue; returns the order in which the jobs started. */
async function startOrder(mode: Fairness): Promise<string[]> {
  const cfg = redis.config({ EBB_WORKER_CONCURRENCY: '4' });
  const queue = redis.reconcileQueue(cfg);
  const rates = new TenantRates(mode);
  const add = (key: ObjectKey) => enqueue(queue, key, { priority: rates.priorityFor(key.namespace) });
  await queue.pause();
  for (let i = 0; i < FLOOD; i += 100) {
    await Promise.all(Array.from({ length: 100 }, (_, j) => add({ kind: 'App', namespace: 'tenant-a', name: `app-${i + j}` })));
  }
  // A second event for an object of A that already waits merges into its job: still one job per object.
  expect((await add({ kind: 'App', namespace: 'tenant-a', name: 'app-7' })).outcome).toBe('merged');
  expect((await add({ kind: 'App', namespace: 'tenant-b', name: 'web' })).outcome).toBe('added');

  const started: string[] = [];
  redis.worker(
    RECONCILE_QUEUE,
    (job: Job<ObjectKey, void, string>) => {
      started.push(dedupId(job.data));
      return Promise.resolve();
    },
    reconcileWorkerOptions(redis.connection(true), cfg),
  );
  await queue.resume();
  await waitFor(() => Promise.resolve(started.length === FLOOD + 1 ? true : undefined), { timeoutMs: DRAIN_MS, intervalMs: 50, what: 'every job ran' });
  expect(new Set(started).size).toBe(FLOOD + 1);
  return started;
}

describe('tenant fairness (EBB_QUEUE_FAIRNESS)', { timeout: TEST_TIMEOUT_MS }, () => {
  it('namespace: a quiet namespace’s edit runs after at most a burst of the flooding namespace’s jobs', async () => {
    const order = await startOrder('namespace');
    const b = order.indexOf('App.tenant-b.web');
    // A's first 64 enqueues counted as quiet (the burst) and went to the wait list first; B came next.
    expect(b).toBeGreaterThanOrEqual(0);
    expect(b).toBeLessThanOrEqual(64 + 4);
    // A itself still drains in its arrival order, tier by tier.
    const a = order.filter((id) => id.startsWith('App.tenant-a.'));
    expect(a.slice(0, 3)).toEqual(['App.tenant-a.app-0', 'App.tenant-a.app-1', 'App.tenant-a.app-2']);
    expect(a.at(-1)).toBe(`App.tenant-a.app-${FLOOD - 1}`);
  });

  it('off: the same edit waits behind the whole backlog (FIFO, as before)', async () => {
    const order = await startOrder('off');
    expect(order.indexOf('App.tenant-b.web')).toBeGreaterThanOrEqual(FLOOD - 4);
  });
});
