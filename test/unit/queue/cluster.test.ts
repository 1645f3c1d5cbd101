/**
 * Cluster mode against real servers (three primaries joined with `redis-cli --cluster create`): ebb's queue
 * code (enqueue, a worker, timers) runs through an ioredis Cluster; the `{hash tag}` of the prefix keeps every
 * key of a queue in one slot, so BullMQ's multi-key scripts work. The failover of a primary to its replica is
 * cluster-failover.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisClusterSet } from '../../../harness/sandbox/redis-ha.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { app, startFlow, type Flow } from './ha-flow.ts';

const OBJECTS = 20;

describe('Cluster mode', () => {
  let dir = '';
  let cluster: RedisClusterSet | undefined;
  let flow: Flow | undefined;
  const ac = new AbortController();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-cluster-'));
    cluster = await startRedisCluster({ dir, primaries: 3 });
  }, 90_000);

  afterAll(async () => {
    ac.abort();
    await flow?.close();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('enqueues, reconciles and fires timers through a three-primary Cluster', async () => {
    const nodes = cluster!.nodes;
    const cfg = parseQueueConfig({
      EBB_REDIS_MODE: 'cluster',
      // One seed is enough: the rest is learnt from CLUSTER SLOTS.
      EBB_REDIS_CLUSTER_NODES: `127.0.0.1:${nodes[0]!.port}`,
      EBB_QUEUE_PREFIX: '{cluster-test}',
      EBB_QUEUE_BACKOFF_BASE: '100ms',
      EBB_QUEUE_BACKOFF_MAX: '1s',
    });
    flow = startFlow(cfg, 500);
    const f = flow;
    expect(f.producer).toBeInstanceOf(Cluster);
    for (let i = 0; i < OBJECTS; i++) await f.add(app(i), ac.signal);
    await waitFor(() => (f.settled.size === OBJECTS ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: `all ${OBJECTS} objects settled (${f.settled.size} so far)`,
    });
    expect(f.overlaps()).toBe(0);
    // Every key of the queues is in the slot of the hash tag, on one primary.
    const client = f.producer as Cluster;
    const owners = await Promise.all(client.nodes('master').map(async (n) => (await n.keys('{cluster-test}*')).length));
    expect(owners.filter((n) => n > 0)).toHaveLength(1);
    expect(await client.cluster('KEYSLOT', '{cluster-test}:reconcile:meta')).toBe(await client.cluster('KEYSLOT', 'cluster-test'));
  }, 180_000);

  // BullMQ resets a Worker's blocking connection with disconnect() then connect(), and waits for connect().
  // With ioredis's ready check, a connect() made while the Cluster is down (cluster_state:fail) never settled.
  it('settles a connect made while the Cluster is down', async () => {
    const nodes = cluster!.nodes;
    const cfg = parseQueueConfig({ EBB_REDIS_MODE: 'cluster', EBB_REDIS_CLUSTER_NODES: nodes.map((n) => `127.0.0.1:${n.port}`).join(',') });
    const client = redisConnection(cfg.redis, { forWorker: true, name: 'ebb-cluster-down' }) as Cluster;
    const survivor = new Redis({ port: nodes[0]!.port, lazyConnect: true });
    try {
      await waitFor(() => (client.status === 'ready' ? true : undefined), { timeoutMs: 30_000, what: 'the client ready' });
      // A primary without a replica lost: its slots are served by no one, and the Cluster reports itself failed.
      await nodes[2]!.kill();
      await waitFor(async () => (/cluster_state:fail/.test(String(await survivor.cluster('INFO'))) ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: 'cluster_state:fail',
      });
      await new Promise<void>((resolve) => {
        client.once('end', () => resolve());
        client.disconnect();
      });
      const outcome = await Promise.race([
        client.connect().then(
          () => 'settled',
          () => 'settled',
        ),
        sleep(15_000).then(() => 'pending'),
      ]);
      expect(outcome).toBe('settled');
    } finally {
      survivor.disconnect();
      client.disconnect();
    }
  }, 120_000);
});
