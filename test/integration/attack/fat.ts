/** Shared by the fat-object attack tests: a tenant's oversized objects, and ebb's processes under the manifests' flags. */
import { Label } from '../../../src/api/keys.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core, type ResourceRef } from '../../../src/kube/paths.ts';
import { sandbox } from '../support.ts';
import { ebbEnv, httpGet, spawnEbb, type EbbProcess } from '../watcher/helpers.ts';
import { manifestNodeOptions } from './manifest.ts';

export const FAT_PODS = 250;
/** Writing a hundred megabytes of objects through one apiserver takes minutes on a loaded machine. */
export const SETUP_TIMEOUT_MS = 600_000;
/** Just under the apiserver's 256 KiB limit on all of an object's annotations. */
const FAT_POD_ANNOTATION_BYTES = 250 * 1024;

export async function inParallel<T>(items: T[], n: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += n) await Promise.all(items.slice(i, i + n).map(fn));
}

/** FAT_PODS pods with 250 KB annotations, labelled as App `app`'s (ebb's label and `app=<app>`), never scheduled. */
export async function createFatPods(namespace: string, app: string): Promise<void> {
  const names = Array.from({ length: FAT_PODS }, (_, i) => `${app}-fat-pod-${i}`);
  await inParallel(names, 8, (name) =>
    sandbox().rest.create(core('pods', namespace), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { [Label.app]: app, app }, annotations: { pad: 'p'.repeat(FAT_POD_ANNOTATION_BYTES) } },
      spec: { schedulerName: 'no-such-scheduler', containers: [{ name: 'c', image: 'registry.example.com/none:1' }] },
    }),
  );
}

/** The names of the objects Events of `reason` in `namespace` regard. */
export async function eventsWithReason(namespace: string, reason: string): Promise<string[]> {
  const ref: ResourceRef = { group: 'events.k8s.io', version: 'v1', resource: 'events', namespace };
  const list = await sandbox().rest.list<{ reason?: string; regarding?: { name?: string } }>(ref);
  return list.items.filter((e) => e.reason === reason).map((e) => e.regarding?.name ?? '');
}

/**
 * `ebb watcher` under deploy/components/watcher.yaml's NODE_OPTIONS (added to `procs` at once, so its logs are
 * printed on failure), once ready (every source listed and watching); a watcher that dies meanwhile fails at once.
 */
export async function startManifestWatcher(
  name: string,
  prefix: string,
  namespaces: string[],
  procs: EbbProcess[],
): Promise<{ proc: EbbProcess; port: number }> {
  const { kubeconfig, redisUrl } = sandbox();
  const env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces }, { NODE_OPTIONS: await manifestNodeOptions('watcher') });
  const proc = spawnEbb('watcher', env, name);
  procs.push(proc);
  const port = await proc.httpPort(60_000);
  const ready = async (): Promise<true | undefined> => {
    if (!proc.running()) return true;
    return (await httpGet(port, '/readyz')).status === 200 ? true : undefined;
  };
  await waitFor(ready, {
    timeoutMs: 120_000,
    intervalMs: 250,
    what: `${name} ready (every source listed and watching)`,
  });
  if (!proc.running()) throw new Error(`${name} exited before it was ready: ${proc.stderr().slice(-600)}`);
  return { proc, port };
}

/** `ebb worker` under deploy/components/worker.yaml's NODE_OPTIONS. */
export async function spawnManifestWorker(prefix: string, namespaces: string[], name = 'worker'): Promise<EbbProcess> {
  const { kubeconfig, redisUrl } = sandbox();
  return spawnEbb('worker', ebbEnv({ kubeconfig, redisUrl, prefix, namespaces }, { NODE_OPTIONS: await manifestNodeOptions('worker') }), name);
}
