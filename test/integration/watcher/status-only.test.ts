/**
 * The watcher does not turn an App's status-only update (what ebb's own status writes are) into a reconcile:
 * only changes of generation, labels, annotations, finalizers, owners or deletion do. The watcher runs alone,
 * so the reconcile queue shows exactly what it enqueued.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { createApps, deleteNamespace, httpGet, metricValue, printLogsOnFailure } from './helpers.ts';
import { startLoneWatcher, type LoneWatcher } from './lone-watcher.ts';

describe('status-only App updates', () => {
  let ns = '';
  let lone: LoneWatcher;

  beforeAll(async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    ns = await freshNamespace('statusonly');
    await createApps(rest, ns, ['web']);
    lone = await startLoneWatcher({ kubeconfig, redisUrl }, ns, 'statusonly');
  });

  afterAll(async () => {
    await lone?.stop();
    await deleteNamespace(sandbox().rest, ns);
  });

  const ignored = async (): Promise<number> =>
    metricValue((await httpGet(lone.port, '/metrics')).body, 'ebb_watch_events_ignored_total', { resource: 'apps', reason: 'status-only' });

  it('is ignored, while a label change still enqueues', async () => {
    printLogsOnFailure([lone.watcher]);
    const { rest } = sandbox();
    // The initial list enqueued the App; with no worker the job stays waiting. Clear it.
    await waitFor(async () => ((await lone.waiting('web')) > 0 ? true : undefined), { timeoutMs: 15_000, what: 'the listed App enqueued' });
    await lone.reconcile.drain();
    expect(await lone.waiting('web')).toBe(0);

    for (let i = 1; i <= 3; i++) {
      await rest.patch({ ...appRef(ns, 'web'), subresource: 'status' }, { status: { observedGeneration: i, readyReplicas: i } }, PatchType.merge);
    }
    await waitFor(async () => ((await ignored()) >= 3 ? true : undefined), { timeoutMs: 10_000, what: 'three status-only events seen' });
    await sleep(500);
    expect(await lone.waiting('web'), 'no reconcile for status-only updates').toBe(0);

    await rest.patch(appRef(ns, 'web'), { metadata: { labels: { tier: 'front' } } }, PatchType.merge);
    await waitFor(async () => ((await lone.waiting('web')) > 0 ? true : undefined), { timeoutMs: 10_000, what: 'the label change enqueued' });
    expect(await ignored()).toBe(3);
  });
});
