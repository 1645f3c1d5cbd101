/**
 * A tenant's oversized objects cannot stop the watcher. Namespace A holds 30 Apps of about 1.4 MB each
 * (replicas 0, one long container argument: no quota cost) and 250 pods with 250 KB annotations carrying ebb's
 * App label. The real `ebb watcher`, under the heap flags of deploy/components/watcher.yaml, lists them, survives
 * a relist (a restart), reports the Apps it leaves out (metric, Event), and an App of namespace B created and
 * edited afterwards is reconciled by a worker (under the worker manifest's flags).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { Label } from '../../../src/api/keys.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core, type ResourceRef } from '../../../src/kube/paths.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  appManifest,
  createApps,
  deleteNamespace,
  ebbEnv,
  editApp,
  httpGet,
  metricValue,
  printLogsOnFailure,
  spawnEbb,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
} from '../watcher/helpers.ts';
import { manifestNodeOptions } from './manifest.ts';

const FAT_APPS = 30;
const FAT_APP_ARG_BYTES = 1_400_000;
const FAT_PODS = 250;
const FAT_POD_ANNOTATION_BYTES = 250 * 1024;
const events = (ns: string): ResourceRef => ({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns });

async function inParallel<T>(items: T[], n: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += n) await Promise.all(items.slice(i, i + n).map(fn));
}

function fatApp(name: string): Record<string, unknown> {
  const app = appManifest(name) as { spec: { template: { spec: { containers: { args?: string[] }[] } } } };
  const container = app.spec.template.spec.containers[0];
  if (container) container.args = ['x'.repeat(FAT_APP_ARG_BYTES)];
  return app;
}

function fatPod(name: string, app: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { [Label.app]: app, app }, annotations: { pad: 'p'.repeat(FAT_POD_ANNOTATION_BYTES) } },
    // Never scheduled: the pods only exist to be listed and watched.
    spec: { schedulerName: 'no-such-scheduler', containers: [{ name: 'c', image: 'registry.example.com/none:1' }] },
  };
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
    const pods = Array.from({ length: FAT_PODS }, (_, i) => `fat-pod-${i}`);
    await inParallel(pods, 8, (name) => rest.create(core('pods', nsA), fatPod(name, 'fat-0')));
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await deleteNamespace(sandbox().rest, nsA);
    await deleteNamespace(sandbox().rest, nsB);
  });

  async function startWatcher(name: string): Promise<{ proc: EbbProcess; port: number }> {
    const { kubeconfig, redisUrl } = sandbox();
    const env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [nsA, nsB] }, { NODE_OPTIONS: await manifestNodeOptions('watcher') });
    const proc = spawnEbb('watcher', env, name);
    procs.push(proc);
    const port = await proc.httpPort(60_000);
    await waitFor(async () => ((await httpGet(port, '/readyz')).status === 200 ? true : undefined), {
      timeoutMs: 120_000,
      intervalMs: 250,
      what: `${name} ready (every source listed and watching)`,
    });
    return { proc, port };
  }

  const tooLarge = async (port: number): Promise<number> =>
    metricValue((await httpGet(port, '/metrics')).body, 'ebb_objects_too_large_total', { resource: 'apps' });

  it('lists, survives a relist, reports the oversized Apps, and keeps reconciling another namespace', async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    printLogsOnFailure(procs);
    const first = await startWatcher('watcher-1');
    expect(await tooLarge(first.port)).toBeGreaterThanOrEqual(FAT_APPS);
    await waitFor(
      async () => {
        const list = await rest.list<{ reason?: string; regarding?: { name?: string } }>(events(nsA));
        return list.items.some((e) => e.reason === 'ObjectTooLarge' && e.regarding?.name?.startsWith('fat-')) ? true : undefined;
      },
      { timeoutMs: 30_000, what: 'an ObjectTooLarge Event on a fat App' },
    );

    // A relist from scratch: the restart every crash-looping replica would go through.
    await first.proc.stop();
    const second = await startWatcher('watcher-2');
    expect(await tooLarge(second.port)).toBeGreaterThanOrEqual(FAT_APPS);

    const worker = spawnEbb(
      'worker',
      ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [nsA, nsB] }, { NODE_OPTIONS: await manifestNodeOptions('worker') }),
    );
    procs.push(worker);
    await createApps(rest, nsB, ['victim']);
    await waitAllObserved(rest, nsB, 1, 120_000);
    const generation = await editApp(rest, nsB, 'victim');
    const [victim] = await waitAllObserved(rest, nsB, 1, 120_000);
    expect(victim?.observedGeneration).toBe(generation);

    expect(second.proc.running(), 'the watcher is still up').toBe(true);
    expect(worker.running(), 'the worker is still up').toBe(true);
    for (const p of procs) expect(p.stderr(), `${p.name} stderr`).not.toContain('heap limit');
  });
});
