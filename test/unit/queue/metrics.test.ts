import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../harness/sandbox/ports.ts';
import { dueSoonBacklog } from '../../../src/queue/backlog.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue } from '../../../src/queue/queues.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { applyQueueKnobs } from '../../../src/queue/knobs.ts';
import { registerQueueMetrics } from '../../../src/queue/metrics.ts';
import type { ObjectKey } from '../../../src/queue/names.ts';
import { setTimer } from '../../../src/queue/timers.ts';
import { useRedis } from './support.ts';

const redis = useRedis();
const app = (name: string): ObjectKey => ({ kind: 'App', namespace: 'ns', name });

describe('queue metrics', () => {
  it('export job counts by state, read from Redis at scrape time', async () => {
    const cfg = redis.config();
    const reconcile = redis.reconcileQueue(cfg);
    const timers = redis.timersQueue(cfg);
    const registry = new Registry();
    registerQueueMetrics(registry, [reconcile, timers]);

    await enqueue(reconcile, app('a'));
    await enqueue(reconcile, app('b'));
    await enqueue(reconcile, app('c'), { priority: 10 });
    await setTimer(timers, app('a'), 'grace', Date.now() + 60_000);

    const text = await registry.metrics();
    expect(text).toContain('ebb_queue_jobs{queue="reconcile",shard="0",state="wait"} 2');
    expect(text).toContain('ebb_queue_jobs{queue="reconcile",shard="0",state="prioritized"} 1');
    expect(text).toContain('ebb_queue_jobs{queue="reconcile",shard="0",state="active"} 0');
    expect(text).toContain('ebb_queue_jobs{queue="timers",shard="0",state="delayed"} 1');
    expect(text).toContain('ebb_queue_jobs{queue="timers",shard="0",state="waiting-children"} 0');
    expect(text).toContain('ebb_queue_up{queue="reconcile",shard="0"} 1');

    // A scrape reads live counts: no polling in between.
    await enqueue(reconcile, app('d'));
    expect(await registry.metrics()).toContain('ebb_queue_jobs{queue="reconcile",shard="0",state="wait"} 3');
  });

  it('report a queue as down, promptly, when Redis cannot be reached', async () => {
    const port = await freePort();
    const cfg = parseQueueConfig({ EBB_REDIS_URL: `redis://127.0.0.1:${port}` });
    const connection = redisConnection(cfg.redis, { forWorker: false });
    const queue = createReconcileQueue(connection, cfg);
    queue.on('error', () => undefined);
    try {
      const registry = new Registry();
      registerQueueMetrics(registry, [queue], { timeoutMs: 300 });
      const t0 = Date.now();
      const text = await registry.metrics();
      expect(Date.now() - t0).toBeLessThan(2_000);
      expect(text).toContain('ebb_queue_up{queue="reconcile",shard="0"} 0');
      expect(text).not.toContain('ebb_queue_jobs{');
    } finally {
      await queue.close().catch(() => undefined);
      connection.disconnect();
    }
  });

  it('report the due-soon backlog for KEDA, and 0 while the queue is paused', async () => {
    const cfg = redis.config();
    const reconcile = redis.reconcileQueue(cfg);
    const timers = redis.timersQueue(cfg);
    const now = Date.now();
    await enqueue(reconcile, app('a'));
    await enqueue(reconcile, app('b'), { priority: 10 });
    await setTimer(timers, app('a'), 'grace', now + 10_000);
    await setTimer(timers, app('b'), 'grace', now + 60_000);

    expect(await dueSoonBacklog(reconcile, 30_000, now)).toEqual({ wait: 1, prioritized: 1, active: 0, delayedDueSoon: 0, paused: false, total: 2 });
    expect((await dueSoonBacklog(timers, 5_000, now)).total).toBe(0);
    expect((await dueSoonBacklog(timers, 15_000, now)).total).toBe(1);
    expect((await dueSoonBacklog(timers, 120_000, now)).total).toBe(2);
    // The backlog grows by itself when the next delayed job beyond the window enters it.
    expect((await dueSoonBacklog(timers, 5_000, now)).growsAt).toBe(now + 10_000 - 5_000);
    expect((await dueSoonBacklog(timers, 15_000, now)).growsAt).toBe(now + 60_000 - 15_000);
    expect((await dueSoonBacklog(timers, 120_000, now)).growsAt).toBeUndefined();
    await timers.pause();
    expect(await dueSoonBacklog(timers, 5_000, now)).toMatchObject({ paused: true, total: 0, growsAt: undefined });
    await timers.resume();

    await reconcile.pause();
    expect(await dueSoonBacklog(reconcile, 30_000, now)).toMatchObject({ paused: true, total: 0 });
    await reconcile.resume();
    expect((await dueSoonBacklog(reconcile, 30_000, now)).total).toBe(2);
  });
});

describe('applyQueueKnobs', () => {
  it('sets the global limits from the config and removes them when unset', async () => {
    const reconcile = redis.reconcileQueue(redis.config());
    const limited = redis.config({ EBB_QUEUE_GLOBAL_CONCURRENCY: '20', EBB_QUEUE_RATE_LIMIT_MAX: '100', EBB_QUEUE_RATE_LIMIT_DURATION: '2s' });
    expect(await applyQueueKnobs(reconcile, limited)).toEqual({ globalConcurrency: 20, globalRateLimit: { max: 100, duration: 2_000 } });
    expect(await applyQueueKnobs(reconcile, limited)).toEqual({ globalConcurrency: 20, globalRateLimit: { max: 100, duration: 2_000 } });
    expect(await applyQueueKnobs(reconcile, redis.config())).toEqual({ globalConcurrency: null, globalRateLimit: null });
  });
});
