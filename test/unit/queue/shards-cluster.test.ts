/**
 * Queue shards on a real Redis Cluster of three primaries: with EBB_QUEUE_SHARDS=3 the three hash tags
 * (`{ebb}`, `{ebb-1}`, `{ebb-2}`) are three slots served by three different primaries; objects are enqueued
 * in their shards as the watcher does, one Worker per shard reconciles them (a reconcile sets a timer in the
 * object's shard; its firing reconciles again and settles the object), and no object is ever reconciled by
 * two workers at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'bullmq';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisClusterSet } from '../../../harness/sandbox/redis-ha.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { formatKey, RECONCILE_QUEUE, TIMERS_QUEUE, type ObjectKey } from '../../../src/queue/names.ts';
import { createReconcileQueues, createTimersQueues, reconcileWorkerOptions, timersWorkerOptions } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { clusterSlot, forKey, shardOfKey, shardPrefixes } from '../../../src/queue/shards.ts';
import { processTimer, setTimer, type TimerData } from '../../../src/queue/timers.ts';
import { shardedBacklog } from '../../../src/queue/backlog.ts';

const OBJECTS = 60;
const SHARDS = 3;
const GRACE_MS = 300;

const app = (i: number): ObjectKey => ({ kind: 'App', namespace: `team-${i % 4}`, name: `app-${i}` });

describe('queue shards on a three-primary Cluster', () => {
  let dir = '';
  let cluster: RedisClusterSet | undefined;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-shards-'));
    cluster = await startRedisCluster({ dir, primaries: 3 });
  }, 90_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('puts each shard on its own primary and settles every object, never reconciling one twice at once', async () => {
    const cfg = parseQueueConfig({
      EBB_REDIS_MODE: 'cluster',
      EBB_REDIS_CLUSTER_NODES: `127.0.0.1:${cluster!.nodes[0]!.port}`,
      EBB_QUEUE_SHARDS: String(SHARDS),
      EBB_WORKER_CONCURRENCY: '6',
    });
    const producer = redisConnection(cfg.redis, { forWorker: false, name: 'shards-producer' });
    const blocking = redisConnection(cfg.redis, { forWorker: true, name: 'shards-worker' });
    closers.push(
      () => Promise.resolve(producer.disconnect()),
      () => Promise.resolve(blocking.disconnect()),
    );
    expect(producer).toBeInstanceOf(Cluster);
    const queues = createReconcileQueues(producer, cfg);
    const timers = createTimersQueues(producer, cfg);
    for (const q of [...queues, ...timers]) {
      q.on('error', () => undefined);
      closers.push(() => q.close());
    }

    const running = new Set<string>();
    const dueAt = new Map<string, number>();
    const settled = new Set<string>();
    const reconciledIn = new Map<string, Set<number>>();
    let overlaps = 0;
    let timerElsewhere = 0;
    const workers = queues.map(
      (_, shard) =>
        new Worker<ObjectKey, void, string>(
          RECONCILE_QUEUE,
          async (job) => {
            const id = formatKey(job.data);
            if (running.has(id)) overlaps++;
            running.add(id);
            try {
              reconciledIn.set(id, (reconciledIn.get(id) ?? new Set()).add(shard));
              await new Promise((r) => setTimeout(r, 5));
              const due = dueAt.get(id) ?? Date.now() + GRACE_MS;
              dueAt.set(id, due);
              if (Date.now() >= due) settled.add(id);
              else await setTimer(forKey(timers, job.data), job.data, 'grace', due);
            } finally {
              running.delete(id);
            }
          },
          reconcileWorkerOptions(blocking, cfg, shard),
        ),
    );
    const timersWorkers = timers.map(
      (_, shard) =>
        new Worker<TimerData, void, string>(
          TIMERS_QUEUE,
          async (job) => {
            if (shardOfKey(job.data.key, SHARDS) !== shard) timerElsewhere++;
            await processTimer(job, forKey(queues, job.data.key));
          },
          timersWorkerOptions(blocking, cfg, shard),
        ),
    );
    for (const w of [...workers, ...timersWorkers]) {
      w.on('error', () => undefined);
      closers.push(() => w.close(true));
    }
    // The process's concurrency is split across the shards: 6 over 3 is 2 each.
    expect(workers.map((w) => w.concurrency)).toEqual([2, 2, 2]);

    // Enqueued like the watcher: each object in its shard, twice (the second merges or follows).
    for (let round = 0; round < 2; round++) {
      await Promise.all(Array.from({ length: OBJECTS }, (_, i) => enqueue(forKey(queues, app(i)), app(i))));
    }
    await waitFor(() => (settled.size === OBJECTS ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: `all ${OBJECTS} objects settled (${settled.size} so far)`,
    });
    expect(overlaps).toBe(0);
    expect(timerElsewhere).toBe(0);
    // Every object was reconciled in its own shard only, and every shard had objects.
    for (let i = 0; i < OBJECTS; i++) expect([...(reconciledIn.get(formatKey(app(i))) ?? [])]).toEqual([shardOfKey(app(i), SHARDS)]);
    expect(new Set([...reconciledIn.values()].map((s) => [...s][0])).size).toBe(SHARDS);

    // Three hash tags, three slots, three primaries: each holds the keys of exactly one shard.
    const prefixes = shardPrefixes(cfg.prefix, SHARDS);
    expect(prefixes).toEqual(['{ebb}', '{ebb-1}', '{ebb-2}']);
    const client = producer as Cluster;
    const slots = prefixes.map((p) => clusterSlot(`${p}:reconcile:meta`));
    expect(await Promise.all(prefixes.map((p) => client.cluster('KEYSLOT', `${p}:reconcile:meta`)))).toEqual(slots);
    const owners = await Promise.all(prefixes.map((p) => cluster!.ownerOf(`${p}:reconcile:meta`)));
    expect(new Set(owners).size).toBe(SHARDS);
    // Each primary holds keys of one shard and none of the others.
    const counts = await Promise.all(client.nodes('master').map((n) => Promise.all(prefixes.map(async (p) => (await n.keys(`${p}:*`)).length))));
    expect(counts).toHaveLength(SHARDS);
    for (const c of counts) expect(c.filter((n) => n > 0)).toHaveLength(1);

    // The KEDA backlog is per shard and summed: all done now.
    const backlog = await shardedBacklog(queues, 30_000);
    expect(backlog.shards).toHaveLength(SHARDS);
    expect(backlog.total).toBe(0);
  }, 180_000);
});
