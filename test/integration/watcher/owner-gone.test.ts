/**
 * Pod events of an App that is gone are not reconciles: the App's own DELETED event enqueued the one
 * reconcile a gone App needs (clearing its pre-warm entries), and each of its pods deleted after would only
 * repeat it. A pod event of an App that exists still enqueues. The watcher runs alone, so the reconcile
 * queue shows exactly what it enqueued.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { Label } from '../../../src/api/keys.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue, type ReconcileQueue } from '../../../src/queue/queues.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { createApps, deleteNamespace, ebbEnv, httpGet, metricValue, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

/**
 * A pod that names the App by its label only (no ownerReference, so the garbage collector leaves it alone and
 * only the test deletes it), Pending for good: a scheduler nobody serves.
 */
async function createAppPod(rest: KubeRest, ns: string, app: string): Promise<void> {
  await rest.create(core('pods', ns), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${app}-0`, labels: { [Label.app]: app, app } },
    spec: { schedulerName: 'ebb-test-unserved', containers: [{ name: 'web', image: 'registry.example.com/web:1.0.0' }] },
  });
}

async function deletePod(rest: KubeRest, ns: string, name: string): Promise<void> {
  await rest.delete(core('pods', ns, name), { gracePeriodSeconds: 0 });
}

describe('pod events of a gone App', () => {
  let ns = '';
  let conn: Redis;
  let reconcile: ReconcileQueue;
  let watcher: EbbProcess;
  let port = 0;

  beforeAll(async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    ns = await freshNamespace('ownergone');
    await createApps(rest, ns, ['gone', 'kept']);
    await createAppPod(rest, ns, 'gone');
    await createAppPod(rest, ns, 'kept');
    const prefix = uniquePrefix('ownergone');
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

  const waiting = async (name: string): Promise<number> => (await reconcile.getJobs(['wait', 'prioritized'])).filter((j) => j.data.name === name).length;
  const ignored = async (): Promise<number> =>
    metricValue((await httpGet(port, '/metrics')).body, 'ebb_watch_events_ignored_total', { resource: 'pods', reason: 'owner-gone' });

  it('enqueue nothing once the App is gone, while a pod event of an existing App still enqueues', async () => {
    printLogsOnFailure([watcher]);
    const { rest } = sandbox();
    // The initial lists enqueued both Apps; with no worker the jobs stay waiting. Clear them.
    await waitFor(async () => ((await waiting('gone')) > 0 && (await waiting('kept')) > 0 ? true : undefined), {
      timeoutMs: 15_000,
      what: 'the listed Apps enqueued',
    });
    await reconcile.drain();

    await rest.delete(appRef(ns, 'gone'));
    await waitFor(async () => ((await waiting('gone')) > 0 ? true : undefined), { timeoutMs: 10_000, what: "the App's deletion enqueued" });
    await reconcile.drain();

    await deletePod(rest, ns, 'gone-0');
    await waitFor(async () => ((await ignored()) >= 1 ? true : undefined), { timeoutMs: 10_000, what: "the gone App's pod event dropped" });
    await sleep(500);
    expect(await waiting('gone'), 'no reconcile for a pod of a gone App').toBe(0);

    await deletePod(rest, ns, 'kept-0');
    await waitFor(async () => ((await waiting('kept')) > 0 ? true : undefined), { timeoutMs: 10_000, what: "the existing App's pod event enqueued" });
  });
});
