/**
 * A worker that stops (scaled down, restarted) writes the Event series counts it had not written yet: the
 * correlator patches a repeated Event's count once a heartbeat (a minute), and a worker that exited within it
 * used to lose the repeats. Here pod creation is refused by a namespace quota, so every reconcile records the
 * same FailedCreate Event; the worker is stopped long before a heartbeat, and the Event carries the count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventReason } from '../../../src/api/keys.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { workerReconcilers } from '../../../src/workers/reconcilers.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { controllerEnv, createApp, eventsOf, image, uniqueName, type EventObject } from './harness.ts';

type WithSeries = EventObject & { series?: { count: number; lastObservedTime: string } };

let ns = '';
let watcher: RunningWatcher | undefined;
let worker: RunningWorker | undefined;

beforeAll(async () => {
  ns = await freshNamespace('app-drain');
  const { rest } = sandbox();
  await rest.create(core('resourcequotas', ns), { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-pods' }, spec: { hard: { pods: '0' } } });
  await waitFor(
    async () => ((await rest.get<{ status?: { hard?: Record<string, string> } }>(core('resourcequotas', ns, 'no-pods'))).status?.hard ? true : undefined),
    {
      timeoutMs: 30_000,
      what: 'quota status',
    },
  );
  const env = controllerEnv(ns, { EBB_QUEUE_BACKOFF_BASE: '200ms', EBB_QUEUE_BACKOFF_MAX: '400ms' });
  const log = createLogger('it-drain', 'warn');
  watcher = await startWatcher(parseWatcherConfig(env), log);
  const set = workerReconcilers();
  worker = await startWorker(parseWorkerConfig(env), log, set.byKind, set.drain);
});

afterAll(async () => {
  await worker?.stop();
  await watcher?.stop();
});

/** Reconciles of Apps the worker ran, from its /metrics. */
async function appReconciles(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n')) if (line.startsWith('ebb_reconcile_total{') && line.includes('kind="App"')) n += Number(line.split(' ').at(-1));
  return n;
}

describe('a stopping worker', () => {
  it('writes the count of a repeated Event before it exits', async () => {
    const name = uniqueName('drain');
    await createApp(ns, name, { replicas: 1, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: image('v1') }] } } });
    const running = worker!;
    const [created] = await waitFor(
      async () => {
        const list = await eventsOf(ns, name, EventReason.failedCreate);
        return list.length > 0 ? list : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the first FailedCreate Event' },
    );
    expect(created?.note).toContain('exceeded quota');
    // Each further reconcile is refused again and records the same Event: counted, not yet written.
    await waitFor(async () => ((await appReconciles(running.httpPort)) >= 4 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200, what: '4 reconciles' });
    const before = (await eventsOf(ns, name, EventReason.failedCreate)) as WithSeries[];
    expect(before).toHaveLength(1);
    expect(before[0]?.series).toBeUndefined();

    await running.stop();
    worker = undefined;
    const after = (await eventsOf(ns, name, EventReason.failedCreate)) as WithSeries[];
    expect(after).toHaveLength(1);
    expect(after[0]?.series?.count).toBeGreaterThanOrEqual(2);
    expect(Date.parse(after[0]?.series?.lastObservedTime ?? '')).toBeGreaterThanOrEqual(Date.parse(created?.eventTime ?? ''));
  });
});
