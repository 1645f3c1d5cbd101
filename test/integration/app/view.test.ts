/**
 * The shared view on a real sandbox (EBB_VIEW=true): an App created and rolled out to a new template completes,
 * its reconciles read the App and its pods from the view (the worker's `ebb_view_reads_total{from="view"}`), and
 * the view in Redis holds the App, its pods and the records of ebb's writes; deleting the App removes its key.
 * An App with more pods than the cap (EBB_VIEW_APP_PODS) still reconciles, fresh, and its hash stops at the cap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { appRef } from '../../../src/api/group.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { Field, viewKey } from '../../../src/view/keys.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { reconcilers } from '../../../src/workers/reconcilers.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { controllerEnv, createApp, patchApp, podsOf, settled, template, uniqueName } from './harness.ts';

let ns = '';
let env: Record<string, string> = {};
let watcher: RunningWatcher | undefined;
let worker: RunningWorker | undefined;
let redis: Redis | undefined;

beforeAll(async () => {
  ns = await freshNamespace('view');
  // A cap of 3 pods per App: the rollout's App fits, a 4-replica App does not.
  env = controllerEnv(ns, { EBB_VIEW: 'true', EBB_VIEW_APP_PODS: '3' });
  const log = createLogger('it-view', 'warn');
  watcher = await startWatcher(parseWatcherConfig(env), log);
  worker = await startWorker(parseWorkerConfig(env), log, reconcilers());
  redis = new Redis(sandbox().redisUrl);
});

afterAll(async () => {
  await worker?.stop();
  await watcher?.stop();
  redis?.disconnect();
});

/** The worker's `ebb_view_reads_total` by `from`, and the fresh ones for the pod cap. */
async function viewReads(): Promise<{ view: number; fresh: number; tooMany: number }> {
  const text = await (await fetch(`http://127.0.0.1:${worker?.httpPort ?? 0}/metrics`)).text();
  const sum = (start: string): number =>
    text
      .split('\n')
      .filter((l) => l.startsWith(start))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  return {
    view: sum('ebb_view_reads_total{from="view"'),
    fresh: sum('ebb_view_reads_total{from="fresh"'),
    tooMany: sum('ebb_view_reads_total{from="fresh",reason="too-many-pods"'),
  };
}

describe('the shared view', () => {
  it('serves the reconciles of a rollout, holds the App, its pods and ebb writes, and goes with the App', async () => {
    const name = uniqueName('view');
    const prefix = env['EBB_QUEUE_PREFIX'] ?? '';
    await createApp(ns, name, { replicas: 3, podManagementPolicy: 'OrderedReady' });
    const v1 = (await settled(ns, name)).app.status?.updateRevision;
    await patchApp(ns, name, { template: template(name, 'v2') });
    const done = await settled(ns, name);
    expect(done.app.status?.updateRevision).not.toBe(v1);
    const reads = await viewReads();
    // Most reconciles of the wave read the view; the first of the App reads fresh (nothing vouched for it yet).
    expect(reads.view).toBeGreaterThan(reads.fresh);
    const fields = await redis!.hgetall(viewKey(prefix, ns, name));
    const pods = (await podsOf(ns, name)).map((p) => p.metadata?.name ?? '');
    expect(
      Object.keys(fields)
        .filter((f) => f.startsWith(Field.podPrefix) && fields[f]?.includes('"o":'))
        .sort(),
    ).toEqual(pods.map(Field.pod).sort());
    expect(fields[Field.wroteApp]).toMatch(/^\d+$/);
    expect(fields[Field.checked]).toMatch(/^\d+ 0$/);
    await sandbox().rest.delete(appRef(ns, name), {});
    await waitFor(async () => ((await redis!.exists(viewKey(prefix, ns, name))) === 0 ? true : undefined), {
      timeoutMs: 120_000,
      what: 'the view key removed with the App and its pods',
    });
  });

  it('reconciles an App over the pod cap fresh, its hash held at the cap', async () => {
    const name = uniqueName('view-big');
    const prefix = env['EBB_QUEUE_PREFIX'] ?? '';
    await createApp(ns, name, { replicas: 4 });
    const v1 = (await settled(ns, name)).app.status?.updateRevision;
    await patchApp(ns, name, { template: template(name, 'v2') });
    const done = await settled(ns, name);
    expect(done.app.status?.updateRevision).not.toBe(v1);
    expect((await viewReads()).tooMany).toBeGreaterThan(0);
    const fields = Object.keys(await redis!.hgetall(viewKey(prefix, ns, name)));
    expect(fields.filter((f) => f.startsWith(Field.podPrefix)).length).toBe(3);
    expect(fields).toContain(Field.tooMany);
  });
});
