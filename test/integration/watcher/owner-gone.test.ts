/**
 * Pod events of an App that is gone are not reconciles: the App's own DELETED event enqueued the one
 * reconcile a gone App needs (clearing its pre-warm entries), and each of its pods deleted after would only
 * repeat it. A pod event of an App that exists still enqueues. The watcher runs alone, so the reconcile
 * queue shows exactly what it enqueued.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { Label } from '../../../src/api/keys.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { createApps, deleteNamespace, httpGet, metricValue, printLogsOnFailure } from './helpers.ts';
import { startLoneWatcher, type LoneWatcher } from './lone-watcher.ts';

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
  let lone: LoneWatcher;

  beforeAll(async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    ns = await freshNamespace('ownergone');
    await createApps(rest, ns, ['gone', 'kept']);
    await createAppPod(rest, ns, 'gone');
    await createAppPod(rest, ns, 'kept');
    lone = await startLoneWatcher({ kubeconfig, redisUrl }, ns, 'ownergone');
  });

  afterAll(async () => {
    await lone?.stop();
    await deleteNamespace(sandbox().rest, ns);
  });

  const ignored = async (): Promise<number> =>
    metricValue((await httpGet(lone.port, '/metrics')).body, 'ebb_watch_events_ignored_total', { resource: 'pods', reason: 'owner-gone' });

  it('enqueue nothing once the App is gone, while a pod event of an existing App still enqueues', async () => {
    printLogsOnFailure([lone.watcher]);
    const { rest } = sandbox();
    // The initial lists enqueued both Apps; with no worker the jobs stay waiting. Clear them.
    await waitFor(async () => ((await lone.waiting('gone')) > 0 && (await lone.waiting('kept')) > 0 ? true : undefined), {
      timeoutMs: 15_000,
      what: 'the listed Apps enqueued',
    });
    await lone.reconcile.drain();

    await rest.delete(appRef(ns, 'gone'));
    await waitFor(async () => ((await lone.waiting('gone')) > 0 ? true : undefined), { timeoutMs: 10_000, what: "the App's deletion enqueued" });
    await lone.reconcile.drain();

    await deletePod(rest, ns, 'gone-0');
    await waitFor(async () => ((await ignored()) >= 1 ? true : undefined), { timeoutMs: 10_000, what: "the gone App's pod event dropped" });
    await sleep(500);
    expect(await lone.waiting('gone'), 'no reconcile for a pod of a gone App').toBe(0);

    await deletePod(rest, ns, 'kept-0');
    await waitFor(async () => ((await lone.waiting('kept')) > 0 ? true : undefined), { timeoutMs: 10_000, what: "the existing App's pod event enqueued" });
  });
});
