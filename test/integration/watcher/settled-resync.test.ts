/**
 * A periodic resync leaves settled Apps alone: once a worker has brought every App to its desired state and
 * stopped, a light resync enqueues nothing (under KEDA: wakes no worker), while an App whose status says it
 * is not settled is enqueued by the next one, and every FULL_RESYNC_EVERY-th resync still enqueues all.
 * `ebb watcher` (resync every second) and one `ebb worker` against the shared apiserver and Redis.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue, type ReconcileQueue } from '../../../src/queue/queues.ts';
import { FULL_RESYNC_EVERY } from '../../../src/watcher/resync.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  appNames,
  createApps,
  deleteNamespace,
  ebbEnv,
  printLogsOnFailure,
  spawnEbb,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
  type LogLine,
} from './helpers.ts';

const APPS = 5;

describe('resync of a settled fleet', () => {
  let ns = '';
  let conn: Redis;
  let queue: ReconcileQueue;
  let watcher: EbbProcess;
  let worker: EbbProcess;

  beforeAll(async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    ns = await freshNamespace('settled');
    await createApps(rest, ns, appNames(APPS));
    const prefix = uniquePrefix('settled');
    conn = redisConnection(redisUrl, { forWorker: false });
    queue = createReconcileQueue(conn, parseQueueConfig({ EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix }));
    const env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [ns] }, { EBB_RESYNC_PERIOD: '1s' });
    watcher = spawnEbb('watcher', env);
    worker = spawnEbb('worker', env);
    await Promise.all([watcher.httpPort(), worker.httpPort()]);
    await waitAllObserved(rest, ns, APPS);
  });

  afterAll(async () => {
    await Promise.all([watcher?.stop(), worker?.stop()]);
    await queue?.close();
    conn?.disconnect();
    await deleteNamespace(sandbox().rest, ns);
  });

  const resyncsAfter = (t: number): LogLine[] => watcher.logs.filter((l) => l.msg === 'resync enqueued' && l.time > t);
  const waiting = async (): Promise<string[]> => (await queue.getJobs(['wait', 'prioritized'])).map((j) => j.data.name).sort();

  it('enqueues nothing while settled, an unsettled App at the next light resync, and everything at a full one', async () => {
    printLogsOnFailure([watcher, worker]);
    await worker.stop();
    // The worker's last status writes may still arrive: start from the first resync after an empty queue.
    await waitFor(async () => ((await queue.getJobCounts('wait', 'prioritized', 'active'))['active'] === 0 ? true : undefined), {
      timeoutMs: 10_000,
      what: 'no job active',
    });
    await queue.drain();
    const settledFrom = Date.now();
    const light = await waitFor(() => resyncsAfter(settledFrom).find((l) => l['full'] === false), { timeoutMs: 10_000, what: 'a light resync' });
    expect(light['objects'], 'a settled fleet: nothing enqueued').toBe(0);
    expect(light['known']).toBe(APPS);
    expect(await waiting()).toEqual([]);

    // A status that says "not settled" (as ebb would write mid-rollout): a status-only event, recorded, not enqueued.
    await sandbox().rest.patch({ ...appRef(ns, 'app-2'), subresource: 'status' }, { status: { readyReplicas: 1 } }, PatchType.merge);
    const unsettledFrom = Date.now();
    const next = await waitFor(() => resyncsAfter(unsettledFrom).find((l) => l['full'] === false && l['objects'] === 1), {
      timeoutMs: 10_000,
      what: 'a light resync that enqueues the unsettled App',
    });
    expect(next['objects']).toBe(1);
    expect(await waiting()).toEqual(['app-2']);

    const full = await waitFor(() => resyncsAfter(unsettledFrom).find((l) => l['full'] === true), {
      timeoutMs: (FULL_RESYNC_EVERY + 4) * 1000,
      what: 'a full resync',
    });
    expect(full['objects']).toBe(APPS);
    expect(await waiting()).toEqual(appNames(APPS).sort());
  });
});
