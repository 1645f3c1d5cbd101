/** What `ebb queue` changes, against a real Redis: limit overrides vs the watcher's re-apply, retry-failed, status. */
import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { applyLimitsWithOverrides } from '../../../src/queue/knobs.ts';
import { RECONCILE_QUEUE, TIMERS_QUEUE, type ObjectKey } from '../../../src/queue/names.ts';
import { changeLimit, retryFailed } from '../../../src/queue/operator.ts';
import { readOverrides } from '../../../src/queue/overrides.ts';
import { reconcileWorkerOptions, timersWorkerOptions } from '../../../src/queue/queues.ts';
import { readQueueStatus } from '../../../src/queue/status.ts';
import type { TimerData } from '../../../src/queue/timers.ts';
import { useRedis } from './support.ts';

const redis = useRedis();
const web: ObjectKey = { kind: 'App', namespace: 'ns', name: 'web' };
const api: ObjectKey = { kind: 'App', namespace: 'ns', name: 'api' };

describe('limit overrides', () => {
  it("survive the watcher's re-apply of its configuration until reset", async () => {
    const cfg = redis.config({ EBB_QUEUE_GLOBAL_CONCURRENCY: '8', EBB_QUEUE_RATE_LIMIT_MAX: '100' });
    const queue = redis.reconcileQueue(cfg);
    const client = redis.connection(false);
    expect(await applyLimitsWithOverrides(queue, client, cfg)).toEqual({ globalConcurrency: 8, globalRateLimit: { max: 100, duration: 1000 } });

    await changeLimit(queue, client, cfg.prefix, { limit: 'globalConcurrency', value: 2 });
    await changeLimit(queue, client, cfg.prefix, { limit: 'globalRateLimit', value: null });
    expect(await queue.getGlobalConcurrency()).toBe(2);
    expect(await queue.getGlobalRateLimit()).toBeNull();
    expect(await applyLimitsWithOverrides(queue, client, cfg)).toEqual({ globalConcurrency: 2, globalRateLimit: null });

    await changeLimit(queue, client, cfg.prefix, { limit: 'globalConcurrency', value: 'reset' });
    expect(await queue.getGlobalConcurrency()).toBe(2);
    expect(await readOverrides(client, cfg.prefix)).toEqual({ globalRateLimit: null });
    expect(await applyLimitsWithOverrides(queue, client, cfg)).toEqual({ globalConcurrency: 8, globalRateLimit: null });
  });
});

describe('retryFailed', () => {
  it('re-enqueues the object of every failed reconcile and timer job, once per object, and removes the failed jobs', async () => {
    const cfg = redis.config({ EBB_QUEUE_ATTEMPTS: '1' });
    const queue = redis.reconcileQueue(cfg);
    const timers = redis.timersQueue(cfg);
    const worker = redis.worker<ObjectKey>(
      RECONCILE_QUEUE,
      () => Promise.reject(new UnrecoverableError('apiserver unreachable')),
      reconcileWorkerOptions(redis.connection(true), cfg),
    );
    await enqueue(queue, web);
    await enqueue(queue, api);
    await waitFor(async () => ((await queue.getFailedCount()) === 2 ? true : undefined), { timeoutMs: 5_000, what: 'two failed jobs' });
    await worker.close();
    // A failed timer of `web`: its reconcile merges with web's.
    const timerWorker = redis.worker<TimerData>(
      TIMERS_QUEUE,
      () => Promise.reject(new UnrecoverableError('redis hiccup')),
      timersWorkerOptions(redis.connection(true), cfg),
    );
    await timers.add('grace', { key: web, reason: 'grace', dueAt: Date.now() });
    await waitFor(async () => ((await timers.getFailedCount()) === 1 ? true : undefined), { timeoutMs: 5_000, what: 'a failed timer' });
    await timerWorker.close();

    const status = await readQueueStatus(queue, { failedLimit: 5 });
    expect(status.counts.failed).toBe(2);
    expect(status.failed.map((f) => f.lastError)).toEqual(['apiserver unreachable', 'apiserver unreachable']);
    expect(status.failed[0]?.attempts).toBe(1);

    expect(await retryFailed(queue, timers)).toEqual({ failed: 3, added: 2, merged: 1, unreadable: 0 });
    expect(await queue.getFailedCount()).toBe(0);
    expect(await timers.getFailedCount()).toBe(0);
    const waiting = await queue.getWaiting();
    expect(waiting.map((j) => j.data.name).sort()).toEqual(['api', 'web']);
    expect(waiting.every((j) => j.attemptsMade === 0)).toBe(true);
  });
});

describe('readQueueStatus', () => {
  it('reports the oldest waiting job across the wait list and prioritized jobs, and the pause', async () => {
    const cfg = redis.config();
    const queue = redis.reconcileQueue(cfg);
    await queue.pause();
    await enqueue(queue, web, { priority: 1000 });
    const first = (await queue.getPrioritized())[0]!.timestamp;
    await new Promise((r) => setTimeout(r, 20));
    await enqueue(queue, api);
    const status = await readQueueStatus(queue, { failedLimit: 0 });
    expect(status).toMatchObject({ name: RECONCILE_QUEUE, paused: true, oldestWaitingAt: first, failed: [] });
    expect(status.counts).toMatchObject({ wait: 1, prioritized: 1 });
  });
});
