/**
 * Queue shards against a real (standalone) Redis: every shard has its own hash tag, an object's job lands in
 * its shard, and what operators read and change covers every shard: status and metrics per shard, limits
 * split across the shards, retry-failed into each object's shard.
 */
import { UnrecoverableError } from 'bullmq';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { applyLimitsWithOverrides } from '../../../src/queue/knobs.ts';
import { registerQueueMetrics } from '../../../src/queue/metrics.ts';
import { RECONCILE_QUEUE, type ObjectKey } from '../../../src/queue/names.ts';
import { changeLimit, LimitTooLowError, retryFailed } from '../../../src/queue/operator.ts';
import { createReconcileQueues, createTimersQueues, reconcileWorkerOptions } from '../../../src/queue/queues.ts';
import { shardOfKey, shardPrefixes } from '../../../src/queue/shards.ts';
import { readStatus } from '../../../src/queue/status.ts';
import { useRedis } from './support.ts';

const redis = useRedis();
const apps: ObjectKey[] = Array.from({ length: 24 }, (_, i) => ({ kind: 'App', namespace: `ns-${i % 3}`, name: `app-${i}` }));

describe('queue shards on one Redis', () => {
  it("keep each object's job under its shard's hash tag; status, metrics and limits cover every shard", async () => {
    const cfg = redis.config({ EBB_QUEUE_SHARDS: '3', EBB_QUEUE_GLOBAL_CONCURRENCY: '7' });
    const client = redis.connection(false);
    const queues = createReconcileQueues(client, cfg);
    const timers = createTimersQueues(client, cfg);
    for (const q of [...queues, ...timers]) q.on('error', () => undefined);
    for (const key of apps) await enqueue(queues[shardOfKey(key, 3)]!, key);

    // Every key of a shard starts with that shard's prefix, and its jobs are exactly the objects of the shard.
    const prefixes = shardPrefixes(cfg.prefix, 3);
    for (const [shard, q] of queues.entries()) {
      expect(q.toKey('wait').startsWith(`${prefixes[shard]}:`)).toBe(true);
      const names = (await q.getJobs(['wait'])).map((j) => j.data.name).sort();
      expect(names).toEqual(
        apps
          .filter((k) => shardOfKey(k, 3) === shard)
          .map((k) => k.name)
          .sort(),
      );
      expect(names.length).toBeGreaterThan(0);
    }

    expect(await applyLimitsWithOverrides(queues, client, cfg)).toEqual({ globalConcurrency: 7, globalRateLimit: null });
    expect(await Promise.all(queues.map((q) => q.getGlobalConcurrency()))).toEqual([3, 2, 2]);
    await changeLimit(queues, client, cfg.prefix, { limit: 'globalRateLimit', value: { max: 10, durationMs: 1000 } });
    expect((await Promise.all(queues.map((q) => q.getGlobalRateLimit()))).map((r) => r?.max)).toEqual([4, 3, 3]);
    await expect(changeLimit(queues, client, cfg.prefix, { limit: 'globalConcurrency', value: 2 })).rejects.toThrow(LimitTooLowError);

    const status = await readStatus([...queues, ...timers], client, cfg.prefix, { failedLimit: 5 });
    expect(status.queues.map((q) => [q.name, q.shard])).toEqual([
      ['reconcile', 0],
      ['reconcile', 1],
      ['reconcile', 2],
      ['timers', 0],
      ['timers', 1],
      ['timers', 2],
    ]);
    expect(status.queues.slice(0, 3).reduce((n, q) => n + q.counts.wait, 0)).toBe(apps.length);

    const registry = new Registry();
    registerQueueMetrics(registry, [...queues, ...timers]);
    const text = await registry.metrics();
    for (const [shard, q] of queues.entries()) {
      expect(text).toContain(`ebb_queue_jobs{queue="reconcile",shard="${shard}",state="wait"} ${await q.getWaitingCount()}`);
      expect(text).toContain(`ebb_queue_up{queue="timers",shard="${shard}"} 1`);
    }
  });

  it('retry-failed reads every shard and enqueues each object in its own', async () => {
    const cfg = redis.config({ EBB_QUEUE_SHARDS: '3', EBB_QUEUE_ATTEMPTS: '1' });
    const client = redis.connection(false);
    const queues = createReconcileQueues(client, cfg);
    const timers = createTimersQueues(client, cfg);
    for (const q of [...queues, ...timers]) q.on('error', () => undefined);
    for (const [shard] of queues.entries()) {
      redis.worker(RECONCILE_QUEUE, () => Promise.reject(new UnrecoverableError('refused')), reconcileWorkerOptions(redis.connection(true), cfg, shard));
    }
    const few = apps.slice(0, 9);
    for (const key of few) await enqueue(queues[shardOfKey(key, 3)]!, key);
    await waitFor(async () => ((await Promise.all(queues.map((q) => q.getFailedCount()))).reduce((a, b) => a + b, 0) === few.length ? true : undefined), {
      timeoutMs: 10_000,
      what: 'every job failed once',
    });
    for (const q of queues) await q.pause();
    expect(await retryFailed(queues, timers)).toEqual({ failed: few.length, added: few.length, merged: 0, unreadable: 0 });
    for (const [shard, q] of queues.entries()) {
      const waiting = (await q.getJobs(['wait'])).map((j) => j.data.name).sort();
      expect(waiting).toEqual(
        few
          .filter((k) => shardOfKey(k, 3) === shard)
          .map((k) => k.name)
          .sort(),
      );
    }
  });
});
