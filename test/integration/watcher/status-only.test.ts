/**
 * The watcher does not turn an App's status-only update (what ebb's own status writes are) into a reconcile:
 * only changes of generation, labels, annotations, finalizers, owners or deletion do. The watcher runs alone,
 * so the reconcile queue shows exactly what it enqueued.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue, type ReconcileQueue } from '../../../src/queue/queues.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { createApps, deleteNamespace, ebbEnv, httpGet, metricValue, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

describe('status-only App updates', () => {
  let ns = '';
  let conn: Redis;
  let reconcile: ReconcileQueue;
  let watcher: EbbProcess;
  let port = 0;

  beforeAll(async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    ns = await freshNamespace('statusonly');
    await createApps(rest, ns, ['web']);
    const prefix = uniquePrefix('statusonly');
    const cfg = parseQueueConfig({ EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix });
    conn = redisConnection(redisUrl, { forWorker: false });
    reconcile = createReconcileQueue(conn, cfg);
    watcher = spawnEbb('watcher', ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [ns] }, { EBB_RESYNC_PERIOD: '0' }));
    port = await watcher.httpPort();
    await waitFor(async () => ((await httpGet(port, '/readyz')).status === 200 ? true : undefined), { timeoutMs: 20_000, what: 'watcher ready' });
  });

  afterAll(async () => {
    await watcher?.stop();
    await reconcile?.close();
    conn?.disconnect();
    await deleteNamespace(sandbox().rest, ns);
  });

  const waiting = async (): Promise<number> => (await reconcile.getJobs(['wait', 'prioritized'])).filter((j) => j.data.name === 'web').length;
  const ignored = async (): Promise<number> =>
    metricValue((await httpGet(port, '/metrics')).body, 'ebb_watch_events_ignored_total', { resource: 'apps', reason: 'status-only' });

  it('is ignored, while a label change still enqueues', async () => {
    printLogsOnFailure([watcher]);
    const { rest } = sandbox();
    // The initial list enqueued the App; with no worker the job stays waiting. Clear it.
    await waitFor(async () => ((await waiting()) > 0 ? true : undefined), { timeoutMs: 15_000, what: 'the listed App enqueued' });
    await reconcile.drain();
    expect(await waiting()).toBe(0);

    for (let i = 1; i <= 3; i++) {
      await rest.patch({ ...appRef(ns, 'web'), subresource: 'status' }, { status: { observedGeneration: i, readyReplicas: i } }, PatchType.merge);
    }
    await waitFor(async () => ((await ignored()) >= 3 ? true : undefined), { timeoutMs: 10_000, what: 'three status-only events seen' });
    await sleep(500);
    expect(await waiting(), 'no reconcile for status-only updates').toBe(0);

    await rest.patch(appRef(ns, 'web'), { metadata: { labels: { tier: 'front' } } }, PatchType.merge);
    await waitFor(async () => ((await waiting()) > 0 ? true : undefined), { timeoutMs: 10_000, what: 'the label change enqueued' });
    expect(await ignored()).toBe(3);
  });
});
