/**
 * A tenant's oversized objects cannot stop the watcher. Namespace A holds 30 Apps of about 1.4 MB each
 * (replicas 0, one long container argument: no quota cost) and 250 pods with 250 KB annotations carrying ebb's
 * App label. The real `ebb watcher`, under the heap flags of deploy/components/watcher.yaml, lists them, survives
 * a relist (a restart), reports the Apps it leaves out (metric, Event), and an App of namespace B created and
 * edited afterwards is reconciled by a worker (under the worker manifest's flags).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  appManifest,
  createApps,
  deleteNamespace,
  editApp,
  httpGet,
  metricValue,
  printLogsOnFailure,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
} from '../watcher/helpers.ts';
import { manifestMemoryLimitBytes, peakRssBytes } from './manifest.ts';
import { createFatPods, eventsWithReason, inParallel, SETUP_TIMEOUT_MS, spawnManifestWorker, startManifestWatcher } from './fat.ts';

const FAT_APPS = 30;
const FAT_APP_ARG_BYTES = 1_400_000;

function fatApp(name: string): Record<string, unknown> {
  const app = appManifest(name) as { spec: { template: { spec: { containers: { args?: string[] }[] } } } };
  const container = app.spec.template.spec.containers[0];
  if (container) container.args = ['x'.repeat(FAT_APP_ARG_BYTES)];
  return app;
}

describe('oversized tenant objects', () => {
  let nsA = '';
  let nsB = '';
  const procs: EbbProcess[] = [];
  const prefix = uniquePrefix('fat');

  beforeAll(async () => {
    const { rest } = sandbox();
    nsA = await freshNamespace('fat-a');
    nsB = await freshNamespace('fat-b');
    const apps = Array.from({ length: FAT_APPS }, (_, i) => `fat-${i}`);
    await inParallel(apps, 4, (name) => rest.create(appRef(nsA), fatApp(name)));
    await createFatPods(nsA, 'fat-0');
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await deleteNamespace(sandbox().rest, nsA);
    await deleteNamespace(sandbox().rest, nsB);
  });

  const startWatcher = (name: string): Promise<{ proc: EbbProcess; port: number }> => startManifestWatcher(name, prefix, [nsA, nsB], procs);

  const tooLarge = async (port: number): Promise<number> =>
    metricValue((await httpGet(port, '/metrics')).body, 'ebb_objects_too_large_total', { resource: 'apps' });

  it('lists, survives a relist, reports the oversized Apps, and keeps reconciling another namespace', async () => {
    const { rest } = sandbox();
    printLogsOnFailure(procs);
    const first = await startWatcher('watcher-1');
    expect(await tooLarge(first.port)).toBeGreaterThanOrEqual(FAT_APPS);
    await waitFor(
      async () => {
        const found = await eventsWithReason(nsA, 'ObjectTooLarge');
        return found.some((name) => name.startsWith('fat-')) ? true : undefined;
      },
      { timeoutMs: 30_000, what: 'an ObjectTooLarge Event on a fat App' },
    );

    // A relist from scratch: the restart every crash-looping replica would go through.
    await first.proc.stop();
    const second = await startWatcher('watcher-2');
    expect(await tooLarge(second.port)).toBeGreaterThanOrEqual(FAT_APPS);

    const worker = await spawnManifestWorker(prefix, [nsA, nsB]);
    procs.push(worker);
    await createApps(rest, nsB, ['victim']);
    await waitAllObserved(rest, nsB, 1, 120_000);
    const generation = await editApp(rest, nsB, 'victim');
    const [victim] = await waitAllObserved(rest, nsB, 1, 120_000);
    expect(victim?.observedGeneration).toBe(generation);

    expect(second.proc.running(), 'the watcher is still up').toBe(true);
    expect(await peakRssBytes(second.proc.pid), 'peak RSS within the manifest memory limit').toBeLessThan(await manifestMemoryLimitBytes('watcher'));
    expect(worker.running(), 'the worker is still up').toBe(true);
    for (const p of procs) expect(p.stderr(), `${p.name} stderr`).not.toContain('heap limit');
  });
});
