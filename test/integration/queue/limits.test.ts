/**
 * `ebb queue concurrency|rate-limit` with the real watcher and worker: a limit set at runtime is obeyed by the
 * running worker, outlives the watcher's resyncs (which re-apply its configured limits) and restarts of the
 * worker and the watcher, and `reset` gives the limit back to the watcher's configuration.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { createReconcileQueue, type ReconcileQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  appNames,
  createApps,
  deleteNamespace,
  ebbEnv,
  editApp,
  printLogsOnFailure,
  spawnEbb,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
} from '../watcher/helpers.ts';
import { ebbQueueOk, queueEnv } from './helpers.ts';

const RESYNC_MS = 1_000;
const WINDOW_MS = 2_000;

describe('ebb queue concurrency / rate-limit', () => {
  let ns = '';
  const procs: EbbProcess[] = [];
  let redis: Redis | undefined;
  let queue: ReconcileQueue | undefined;

  beforeAll(async () => {
    ns = await freshNamespace('qlimits');
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await queue?.close();
    redis?.disconnect();
    await deleteNamespace(sandbox().rest, ns);
  });

  it('keeps runtime limits across resyncs and restarts, the worker obeys them, and reset returns to the configuration', async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    printLogsOnFailure(procs);
    const prefix = uniquePrefix('qlimits');
    const configured = { EBB_QUEUE_GLOBAL_CONCURRENCY: '8', EBB_QUEUE_RATE_LIMIT_MAX: '1000' };
    const env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [ns] }, { EBB_RESYNC_PERIOD: `${RESYNC_MS}ms`, ...configured });
    const cli = queueEnv(redisUrl, prefix, configured);
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
    queue = createReconcileQueue(redis, parseQueueConfig(cli));
    const q = queue;
    const limits = async (): Promise<unknown> => ({ concurrency: await q.getGlobalConcurrency(), rate: await q.getGlobalRateLimit() });
    const names = appNames(3, 'lim');
    await createApps(rest, ns, names);
    const start = (name: string, extra: Record<string, string> = {}): EbbProcess => {
      const p = spawnEbb(name === 'watcher' ? 'watcher' : 'worker', { ...env, ...extra }, name);
      procs.push(p);
      return p;
    };
    let watcher = start('watcher');
    let worker = start('worker', { EBB_LOG_LEVEL: 'debug' });
    await Promise.all([watcher.httpPort(), worker.httpPort()]);
    await waitAllObserved(rest, ns, names.length);
    expect(await limits()).toEqual({ concurrency: 8, rate: { max: 1000, duration: 1000 } });

    expect(await ebbQueueOk(['concurrency', '2'], cli)).toContain('global concurrency set to 2');
    expect(await ebbQueueOk(['rate-limit', `1/${WINDOW_MS}ms`], cli)).toContain('global rate limit set to 1/2s');
    const setAt = Date.now();
    const resyncsAfter = async (p: EbbProcess, t: number, n: number): Promise<void> => {
      await waitFor(() => (p.logs.filter((l) => l.msg === 'resync enqueued' && l.time > t).length >= n ? true : undefined), {
        timeoutMs: 15_000,
        what: `${n} resyncs of ${p.name}`,
      });
    };
    await resyncsAfter(watcher, setAt, 2);
    const overridden = { concurrency: 2, rate: { max: 1, duration: WINDOW_MS } };
    expect(await limits()).toEqual(overridden);
    const status = await ebbQueueOk(['status'], cli);
    expect(status).toContain('global concurrency: 2 (set with ebb queue)');
    expect(status).toContain('global rate limit:  1/2s (set with ebb queue)');

    // The running worker obeys the rate limit: edits of three Apps at once start at least a window apart.
    const editedAt = Date.now();
    await Promise.all(names.map((n) => editApp(rest, ns, n)));
    await waitAllObserved(rest, ns, names.length, 30_000);
    const starts = worker.logs.filter((l) => l.msg === 'reconcile started' && l.time >= editedAt).map((l) => l['startedAt'] as number);
    expect(starts.length).toBeGreaterThanOrEqual(names.length);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThan(WINDOW_MS * 0.75);

    // Restarts of the worker and of the watcher (which applies its configuration at start) change nothing.
    await worker.stop();
    worker = start('worker-2');
    await worker.httpPort();
    await watcher.stop();
    const restartedAt = Date.now();
    watcher = start('watcher');
    await watcher.httpPort();
    await resyncsAfter(watcher, restartedAt, 1);
    expect(await limits()).toEqual(overridden);

    // Reset: the watcher's configuration applies again from its next resync.
    expect(await ebbQueueOk(['concurrency', 'reset'], cli)).toContain('override removed');
    expect(await ebbQueueOk(['rate-limit', 'reset'], cli)).toContain('override removed');
    const resetAt = Date.now();
    await resyncsAfter(watcher, resetAt, 1);
    expect(await limits()).toEqual({ concurrency: 8, rate: { max: 1000, duration: 1000 } });
    expect(await ebbQueueOk(['status'], cli)).toContain("global concurrency: 8 (watcher's setting)");
  });
});
