/**
 * Cluster failover against real servers (three primaries with a replica each, joined with `redis-cli --cluster
 * create`): the primary serving the queues' slot is killed mid-stream (SIGKILL, by PID); its replica takes over,
 * the client follows the new slot map and reports Redis restored (the watcher enqueues every known object
 * again), and every object settles: no job or timer is lost for good, and no object is reconciled twice at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisClusterSet } from '../../../harness/sandbox/redis-ha.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { addAcrossCrash, failoverConfig, startFlow, waitSettled, within, type Flow } from './ha-flow.ts';

const OBJECTS = 40;

describe('Cluster mode with replicas', () => {
  let dir = '';
  let cluster: RedisClusterSet | undefined;
  let flow: Flow | undefined;
  const ac = new AbortController();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-cluster-ha-'));
    cluster = await startRedisCluster({ dir, primaries: 3, replicas: 1 });
  }, 120_000);

  afterAll(async () => {
    ac.abort();
    await flow?.close();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps every job and timer when the primary of the queue slot fails over to its replica', async () => {
    const c = cluster!;
    const cfg = failoverConfig({
      EBB_REDIS_MODE: 'cluster',
      EBB_REDIS_CLUSTER_NODES: c.nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
      EBB_QUEUE_PREFIX: '{cluster-ha}',
    });
    const before = await c.ownerOf('cluster-ha');
    const victim = c.nodes.find((n) => n.port === before);
    expect(victim).toBeDefined();
    flow = startFlow(cfg, 1_000);
    const f = flow;
    // Mid-stream: half enqueued, some already settled; the primary of the slot crashes.
    const adding = addAcrossCrash(f, OBJECTS, () => victim!.kill(), ac.signal);
    await waitFor(
      async () => {
        const now = await c.ownerOf('cluster-ha');
        return now !== undefined && now !== before ? now : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'the replica to take over the slot' },
    );
    await within(f, adding, 60_000, 'enqueueing every object');
    await waitSettled(f, OBJECTS, 90_000);
    expect(f.restored()).toBeGreaterThanOrEqual(1);
    expect(f.overlaps()).toBe(0);
  }, 240_000);
});
