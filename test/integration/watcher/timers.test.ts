/**
 * Timers live in the watcher (BullMQ promotes delayed jobs only inside a running Worker,
 * so timers must not depend on reconcile workers):
 *  - with only `ebb watcher` running (zero workers), a timer set with setTimer becomes a waiting reconcile job
 *    once due;
 *  - a timer 60 s ahead never postpones an event: an edit of the same App is reconciled promptly by a
 *    worker, and the timer stays pending with its due time unchanged.
 * Both unsharded and with three queue shards (the watcher runs one timers Worker per shard; an App's timer
 * is in its shard and enqueues into that shard's reconcile queue).
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import type { ObjectKey } from '../../../src/queue/names.ts';
import { createReconcileQueues, createTimersQueues, type ReconcileQueue, type TimersQueue } from '../../../src/queue/queues.ts';
import { forKey, shardOfKey } from '../../../src/queue/shards.ts';
import { setTimer } from '../../../src/queue/timers.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  createApps,
  deleteNamespace,
  ebbEnv,
  editApp,
  httpGet,
  printLogsOnFailure,
  spawnEbb,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
} from './helpers.ts';

function timerOnlyKey(namespace: string, shards: number): ObjectKey {
  for (let i = 0; ; i++) {
    const key: ObjectKey = { kind: 'App', namespace, name: `timer-only-${i}` };
    if (shards === 1 || shardOfKey(key, shards) > 0) return key;
  }
}

describe.each([{ shards: 1 }, { shards: 3 }])('timers ($shards shard(s))', ({ shards }) => {
  let ns = '';
  let env: Record<string, string>;
  let conn: Redis;
  let reconciles: ReconcileQueue[] = [];
  let timerQueues: TimersQueue[] = [];
  let watcher: EbbProcess;
  const procs: EbbProcess[] = [];

  beforeAll(async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    ns = await freshNamespace(`timers-${shards}`);
    await createApps(rest, ns, ['web']);
    const prefix = uniquePrefix('timers');
    env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [ns] }, { EBB_RESYNC_PERIOD: '0', EBB_QUEUE_SHARDS: String(shards) });
    const cfg = parseQueueConfig({ EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix, EBB_QUEUE_SHARDS: String(shards) });
    conn = redisConnection(redisUrl, { forWorker: false });
    reconciles = createReconcileQueues(conn, cfg);
    timerQueues = createTimersQueues(conn, cfg);
    watcher = spawnEbb('watcher', env);
    procs.push(watcher);
    const port = await watcher.httpPort();
    await waitFor(async () => ((await httpGet(port, '/readyz')).status === 200 ? true : undefined), { timeoutMs: 20_000, what: 'watcher ready' });
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await Promise.all([...reconciles, ...timerQueues].map((q) => q.close()));
    conn?.disconnect();
    await deleteNamespace(sandbox().rest, ns);
  });

  it('fire with zero workers running: a due timer becomes a waiting reconcile job', async () => {
    printLogsOnFailure(procs);
    // A key no watch event ever enqueues, so the job can only come from the timer.
    // With shards, one outside shard 0, so the timer goes through a shard's own timers Worker and queues.
    const key = timerOnlyKey(ns, shards);
    const reconcile = forKey(reconciles, key);
    const timers = forKey(timerQueues, key);
    const dueAt = Date.now() + 1_500;
    expect(await setTimer(timers, key, 'grace', dueAt)).toBe('created');
    expect(await timers.getDelayedCount()).toBe(1);
    const before = await reconcile.getJobs(['wait', 'prioritized', 'active', 'delayed']);
    expect(before.filter((j) => j.data.name === key.name)).toEqual([]);

    const job = await waitFor(async () => (await reconcile.getJobs(['wait', 'prioritized'])).find((j) => j.data.name === key.name), {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'the timer to enqueue a reconcile',
    });
    expect(job.data).toEqual(key);
    expect(job.timestamp, 'enqueued when due, not before').toBeGreaterThanOrEqual(dueAt);
    expect(await timers.getDelayedCount(), 'the timer fired').toBe(0);
    const counts = await reconcile.getJobCounts('wait', 'prioritized', 'active');
    expect(counts['active'], 'no worker runs anything').toBe(0);
    expect((counts['wait'] ?? 0) + (counts['prioritized'] ?? 0)).toBeGreaterThanOrEqual(1);
  });

  it('never postpone an event: an edit is processed promptly while the App has a timer 60 s ahead', async () => {
    printLogsOnFailure(procs);
    const { rest } = sandbox();
    const worker = spawnEbb('worker', env);
    procs.push(worker);
    await worker.httpPort();
    await waitAllObserved(rest, ns, 1);

    const key: ObjectKey = { kind: 'App', namespace: ns, name: 'web' };
    const timers = forKey(timerQueues, key);
    const dueAt = Date.now() + 60_000;
    expect(await setTimer(timers, key, 'canary-pause', dueAt)).toBe('created');
    const editedAt = Date.now();
    const generation = await editApp(rest, ns, 'web');
    // Reconciled long before the timer (60 s) would have brought it: half of that is the bound, whatever the load.
    const [app] = await waitAllObserved(rest, ns, 1, 30_000);
    const tookMs = Date.now() - editedAt;
    expect(app?.observedGeneration).toBe(generation);
    expect(tookMs, 'the edit was reconciled long before the timer is due').toBeLessThan(30_000);

    const pending = await timers.getDelayed();
    expect(
      pending.map((j) => ({ key: j.data.key, dueAt: j.data.dueAt })),
      'the timer is untouched',
    ).toEqual([{ key, dueAt }]);
    process.stdout.write(`timers (${shards} shard(s)): edit observed ${tookMs} ms after it was written, with a timer pending 60 s ahead\n`);
  });
});
