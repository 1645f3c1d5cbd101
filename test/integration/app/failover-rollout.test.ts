/**
 * A Redis failover in the middle of a rollout, with the real processes: one `ebb watcher` and two `ebb worker`
 * processes reach Redis through three sentinels (a primary and a replica), or through a Cluster of three
 * primaries with a replica each; real servers, started and killed by PID. A 20-replica App is rolled to a new
 * template; once some pods run the new revision, the primary that holds ebb's keys is killed (SIGKILL). Its
 * replica is promoted, the processes follow it, the watcher enqueues every known object again (what a promoted
 * replica lacks is derived again), and the rollout completes. The workers' debug logs show that no App was
 * reconciled by both workers at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, startSentinelSet } from '../../../harness/sandbox/redis-ha.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { deleteNamespace, overlappingRuns, printLogsOnFailure, reconcileRuns, spawnEbb, uniquePrefix, type EbbProcess } from '../watcher/helpers.ts';
import { createApp, patchApp, settled, template, uniqueName, until } from './harness.ts';

const REPLICAS = 20;

/** A Redis with failover for the test: the settings that reach it, and how to fail its primary over. */
interface HaRedis {
  env: Record<string, string>;
  /** Kills the primary that holds the keys of the queue prefix; resolves once its replica serves them. */
  failOver(): Promise<void>;
  stop(): Promise<void>;
}

const modes: [string, (dir: string, prefix: string) => Promise<HaRedis>][] = [
  [
    'Sentinel',
    async (dir) => {
      const set = await startSentinelSet({ dir, masterName: 'ebb-rollout', downAfterMs: 1_000, failoverTimeoutMs: 3_000 });
      const env = {
        EBB_REDIS_MODE: 'sentinel',
        EBB_REDIS_SENTINELS: set.sentinels.map((x) => `127.0.0.1:${x.port}`).join(','),
        EBB_REDIS_SENTINEL_MASTER: set.masterName,
      };
      const failOver = async (): Promise<void> => {
        expect(await set.primaryPort()).toBe(set.primary.port);
        await set.primary.kill();
        await waitFor(async () => ((await set.primaryPort()) === set.replica.port ? true : undefined), {
          timeoutMs: 60_000,
          intervalMs: 200,
          what: 'the sentinels to promote the replica',
        });
      };
      return { env, failOver, stop: () => set.stop() };
    },
  ],
  [
    'Cluster',
    async (dir, prefix) => {
      const cluster = await startRedisCluster({ dir, primaries: 3, replicas: 1 });
      const env = { EBB_REDIS_MODE: 'cluster', EBB_REDIS_CLUSTER_NODES: cluster.nodes.map((n) => `127.0.0.1:${n.port}`).join(',') };
      const failOver = async (): Promise<void> => {
        const before = await cluster.ownerOf(prefix);
        const victim = cluster.nodes.find((n) => n.port === before);
        expect(victim).toBeDefined();
        await victim!.kill();
        await waitFor(
          async () => {
            const now = await cluster.ownerOf(prefix);
            return now !== undefined && now !== before ? true : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 250, what: 'the replica to take over the slot' },
        );
      };
      return { env, failOver, stop: () => cluster.stop() };
    },
  ],
];

describe.each(modes)('%s failover during a rollout', (mode, start) => {
  let dir = '';
  let redis: HaRedis | undefined;
  let ns = '';
  const prefix = uniquePrefix(mode.toLowerCase());
  const procs: EbbProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-failover-rollout-'));
    redis = await start(dir, prefix);
    ns = await freshNamespace(`${mode.toLowerCase()}-roll`);
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    if (ns) await deleteNamespace(sandbox().rest, ns);
    await redis?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`completes a ${REPLICAS}-replica rollout whose Redis primary is killed half-way, no App reconciled twice at once`, async () => {
    const { kubeconfig } = sandbox();
    printLogsOnFailure(procs);
    const env = {
      ...redis!.env,
      KUBECONFIG: kubeconfig,
      EBB_QUEUE_PREFIX: prefix,
      EBB_NAMESPACES: ns,
      EBB_QUEUE_BACKOFF_BASE: '200ms',
      EBB_QUEUE_BACKOFF_MAX: '2s',
      EBB_BOARD: 'false',
    };
    const watcher = spawnEbb('watcher', env);
    const workers = [0, 1].map((i) => spawnEbb('worker', { ...env, EBB_LOG_LEVEL: 'debug' }, `worker-${i}`));
    procs.push(watcher, ...workers);
    await Promise.all(procs.map((p) => p.httpPort()));

    const name = uniqueName('roll');
    await createApp(ns, name, {
      replicas: REPLICAS,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 4 } },
    });
    const v1 = (await settled(ns, name, undefined, 180_000)).app.status?.updateRevision;
    await patchApp(ns, name, { template: template(name, 'v2') });
    // Half-way: some pods already run the new revision, most do not.
    const midway = await until(ns, name, (x) => (x.app.status?.updatedReplicas ?? 0) >= 4 && x.app.status?.updateRevision !== v1, {
      timeoutMs: 180_000,
      what: 'the rollout under way',
    });
    const v2 = midway.app.status?.updateRevision;
    expect(midway.app.status?.updatedReplicas, 'the rollout is not over when the primary is killed').toBeLessThan(REPLICAS);
    await redis!.failOver();

    const done = await settled(ns, name, v2, 240_000);
    expect(done.app.status).toMatchObject({ currentRevision: v2, updatedReplicas: REPLICAS, readyReplicas: REPLICAS });
    // The watcher saw Redis come back and enqueued every known object again.
    expect(watcher.logs.some((l) => l.msg === 'redis back: resync enqueued')).toBe(true);

    await Promise.all(procs.map((p) => p.stop()));
    const runs = workers.flatMap((w) => reconcileRuns(w));
    expect(runs.length, 'reconcile runs recorded').toBeGreaterThan(REPLICAS / 4);
    expect(overlappingRuns(runs)).toEqual([]);
  }, 600_000);
});
