/**
 * Redis holds only intent; losing it loses nothing for good. `ebb watcher` (resync every 3 s) and
 * `ebb worker` against the shared apiserver and a private Redis (this file flushes and restarts it):
 *  - FLUSHALL while Apps are being edited and reconciled: afterwards every App's latest generation is observed;
 *  - edits whose jobs were waiting when FLUSHALL wiped them (the worker was stopped): the queue is empty,
 *    no further event comes, and the next resync brings every App back — observed again;
 *  - Redis stopped and started again (empty) on the same port while Apps are edited: both processes ride it
 *    out and every App is observed; the watcher's /healthz fails once Redis has been out of reach for
 *    EBB_REDIS_UNHEALTHY_AFTER, and passes again when it is back.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue, type ReconcileQueue } from '../../../src/queue/queues.ts';
import { startRedis, type RedisServer } from '../../../harness/sandbox/redis.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  appNames,
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

const APPS = 10;
const RESYNC_MS = 3_000;

describe('Redis loss during activity', () => {
  let dir = '';
  let redis: RedisServer;
  let admin: Redis;
  let queue: ReconcileQueue;
  let ns = '';
  let env: Record<string, string>;
  let watcher: EbbProcess;
  const procs: EbbProcess[] = [];
  let workers = 0;

  const startWorker = (): EbbProcess => {
    const w = spawnEbb('worker', env, `worker-${workers++}`);
    procs.push(w);
    return w;
  };

  /**
   * Edits every App round robin until `stop()` (which returns how many edits were made); `more(k)` resolves
   * once `k` more edits than now are made, so each phase of a fault sees edits however slow the machine is.
   */
  const editLoop = (): { more(k: number, what: string): Promise<void>; stop(): Promise<number> } => {
    let stopped = false;
    let n = 0;
    const loop = (async () => {
      for (; !stopped; n++) {
        await editApp(sandbox().rest, ns, `app-${n % APPS}`);
        await sleep(30);
      }
    })();
    return {
      more: (k, what) => {
        const target = n + k;
        return waitFor(() => (n >= target ? true : undefined), { timeoutMs: 60_000, intervalMs: 20, what: `${k} edits ${what}` }).then(() => undefined);
      },
      stop: async () => {
        stopped = true;
        await loop;
        return n;
      },
    };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-redis-loss-'));
    redis = await startRedis({ dir });
    ns = await freshNamespace('redis');
    await createApps(sandbox().rest, ns, appNames(APPS));
    const prefix = uniquePrefix('redis');
    env = ebbEnv(
      { kubeconfig: sandbox().kubeconfig, redisUrl: redis.url, prefix, namespaces: [ns] },
      {
        EBB_RESYNC_PERIOD: `${RESYNC_MS / 1000}s`,
        EBB_REDIS_UNHEALTHY_AFTER: '2s',
      },
    );
    admin = redisConnection(redis.url, { forWorker: false });
    queue = createReconcileQueue(admin, parseQueueConfig({ EBB_REDIS_URL: redis.url, EBB_QUEUE_PREFIX: prefix }));
    queue.on('error', () => undefined); // Redis is stopped on purpose below
    watcher = spawnEbb('watcher', env);
    procs.push(watcher);
    await Promise.all([watcher.httpPort(), startWorker().httpPort()]);
    await waitAllObserved(sandbox().rest, ns, APPS);
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await queue?.close();
    admin?.disconnect();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
    await deleteNamespace(sandbox().rest, ns);
  });

  it('FLUSHALL while Apps are edited and reconciled: every App is observed again', async () => {
    printLogsOnFailure(procs);
    const edits = editLoop();
    await edits.more(10, 'before the flush');
    await admin.flushall();
    await edits.more(10, 'after the flush');
    expect(await edits.stop()).toBeGreaterThanOrEqual(20);
    await waitAllObserved(sandbox().rest, ns, APPS, 4 * RESYNC_MS);
    expect(procs.every((p) => p.running())).toBe(true);
  });

  it('edits whose waiting jobs FLUSHALL wiped are recovered by the next resync', async () => {
    printLogsOnFailure(procs);
    // No worker: every edit leaves a waiting job.
    await Promise.all(procs.filter((p) => p.name.startsWith('worker')).map((p) => p.stop()));
    for (let i = 0; i < APPS; i++) await editApp(sandbox().rest, ns, `app-${i}`);
    const waitingJobs = async (): Promise<number> => {
      const c = await queue.getJobCounts('wait', 'prioritized');
      return (c['wait'] ?? 0) + (c['prioritized'] ?? 0);
    };
    // One job per edited App, once the watcher has seen every edit.
    await waitFor(async () => ((await waitingJobs()) >= APPS ? true : undefined), { timeoutMs: 30_000, what: 'a waiting job per edited App' });
    expect(await waitingJobs(), 'jobs waiting for a worker').toBe(APPS);

    await admin.flushall();
    const flushedAt = Date.now();
    const counts = await queue.getJobCounts('wait', 'prioritized', 'active', 'delayed');
    expect(
      Object.values(counts).reduce((a, b) => a + b, 0),
      'FLUSHALL wiped the jobs',
    ).toBe(0);

    await startWorker().httpPort();
    await waitAllObserved(sandbox().rest, ns, APPS, 3 * RESYNC_MS);
    const resync = watcher.logs.find((l) => l.msg === 'resync enqueued' && l.time >= flushedAt);
    expect(resync, 'a resync ran after the flush').toBeDefined();
    expect(resync?.['objects']).toBe(APPS);
  });

  it('Redis restart (empty, same port) while Apps are edited: both processes ride it out, every App observed', async () => {
    printLogsOnFailure(procs);
    const mark = watcher.logs.length;
    const edits = editLoop();
    await edits.more(10, 'before the outage');
    await redis.stop();
    const port = await watcher.httpPort();
    const healthz = async (status: number): Promise<true | undefined> => ((await httpGet(port, '/healthz')).status === status ? true : undefined);
    await waitFor(() => healthz(503), { timeoutMs: 20_000, intervalMs: 200, what: "the watcher's /healthz failing after EBB_REDIS_UNHEALTHY_AFTER" });
    await edits.more(20, 'while Redis is down');
    redis = await startRedis({ dir, port: redis.port });
    await waitFor(() => healthz(200), { timeoutMs: 20_000, intervalMs: 200, what: "the watcher's /healthz passing again" });
    await edits.more(10, 'after the restart');
    expect(await edits.stop()).toBeGreaterThanOrEqual(40);

    await waitAllObserved(sandbox().rest, ns, APPS, 30_000);
    expect(
      procs.filter((p) => !p.running()).map((p) => p.name),
      'processes that exited',
    ).toEqual(procs.filter((p) => p.name === 'worker-0').map((p) => p.name));
    expect(
      watcher.logs.slice(mark).some((l) => l.msg === 'redis connection error'),
      'the watcher reported the outage',
    ).toBe(true);
    // Everything was reported as structured log lines: nothing raw on stderr.
    expect(procs.map((p) => p.stderr()).filter((e) => e !== '')).toEqual([]);
  });
});
