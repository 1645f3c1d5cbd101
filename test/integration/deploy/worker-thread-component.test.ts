/**
 * deploy/components/watcher-worker-thread as `kubectl kustomize` renders it: the watcher's worker thread is on
 * and reads a kubeconfig whose token is the worker ServiceAccount's (a token Secret the component adds, mounted
 * where the kubeconfig looks), so the thread reconciles as the worker and the watcher keeps its own identity; the
 * workers' egress covers the watcher, the worker Deployment starts at 0 and the watcher's grace period covers
 * the thread's stop. The install test runs the same wiring against the sandbox apiserver.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { LabelSelector } from '../../../src/api/meta.ts';
import { loadKubeConfig } from '../../../src/kube/kubeconfig.ts';
import { selectorMatches } from '../../../src/workers/app/pods/selector.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { envOf, objectOf, renderWith, type Manifest } from './components.ts';

interface Kubeconfig {
  clusters: { cluster: { server: string; 'certificate-authority': string } }[];
  users: { user: { tokenFile: string } }[];
}
/** The file a container sees at `path`: the volume mounted over it and the key within. */
function mountedAt(d: Manifest, path: string): { secret?: string; configMap?: string; key: string } {
  const pod = d.spec?.template?.spec;
  const mount = pod?.containers?.[0]?.volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`));
  const volume = pod?.volumes?.find((v) => v.name === mount?.name);
  if (!mount || !volume) throw new Error(`nothing mounted at ${path}`);
  return { secret: volume.secret?.secretName, configMap: volume.configMap?.name, key: path.slice(mount.mountPath.length + 1) };
}

/** The thread's kubeconfig as rendered (from the ConfigMap mounted where EBB_WATCHER_WORKER_THREAD_KUBECONFIG points) and the files it names. */
function threadWiring(objects: Manifest[]): { doc: Kubeconfig; tokenFile: string; caFile: string } {
  const cfg = parseWatcherConfig(envOf(objects, 'ebb-watcher', { 'ebb-redis/password': 'pw' }));
  const path = cfg.workerThread?.env['KUBECONFIG'];
  if (!path) throw new Error('the thread has no kubeconfig of its own');
  const file = mountedAt(objectOf(objects, 'Deployment', 'ebb-watcher'), path);
  const doc = parse(objectOf(objects, 'ConfigMap', file.configMap ?? '').data?.[file.key] ?? '') as Kubeconfig;
  return { doc, tokenFile: doc.users[0]?.user.tokenFile ?? '', caFile: doc.clusters[0]?.cluster['certificate-authority'] ?? '' };
}

/** `doc` with its files under `root`. */
const rooted = (doc: Kubeconfig, root: string): Kubeconfig => ({
  ...doc,
  clusters: doc.clusters.map((c) => ({ ...c, cluster: { ...c.cluster, 'certificate-authority': join(root, c.cluster['certificate-authority']) } })),
  users: doc.users.map((u) => ({ ...u, user: { tokenFile: join(root, u.user.tokenFile) } })),
});

async function place(root: string, path: string, content: string): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), content);
}

describe('deploy/components/watcher-worker-thread', () => {
  let objects: Manifest[] = [];
  let dir = '';
  beforeAll(async () => {
    objects = await renderWith('watcher-worker-thread');
    dir = await mkdtemp(join(tmpdir(), 'ebb-thread-component-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("turns the watcher's worker thread on, reconciling with the worker ServiceAccount's token", async () => {
    const watcher = objectOf(objects, 'Deployment', 'ebb-watcher');
    const w = threadWiring(objects);
    // The kubeconfig names the token and the CA of one mounted token Secret, the worker ServiceAccount's.
    const token = mountedAt(watcher, w.tokenFile);
    expect(token.key).toBe('token');
    expect(mountedAt(watcher, w.caFile)).toEqual({ ...token, key: 'ca.crt' });
    const secret = objectOf(objects, 'Secret', token.secret ?? '');
    expect(secret.type).toBe('kubernetes.io/service-account-token');
    const worker = objectOf(objects, 'Deployment', 'ebb-worker');
    expect(secret.metadata.annotations?.['kubernetes.io/service-account.name']).toBe(worker.spec?.template?.spec?.serviceAccountName);
    expect(watcher.spec?.template?.spec?.serviceAccountName, 'the watcher keeps its own identity').toBe('ebb-watcher');

    // ebb's kube client reads that kubeconfig as written, with the files where the mounts put them.
    const root = join(dir, 'root');
    await place(root, w.tokenFile, 'a-token\n');
    await place(root, w.caFile, '-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n');
    const local = join(dir, 'kubeconfig');
    await writeFile(local, stringify(rooted(w.doc, root)));
    const loaded = loadKubeConfig(local);
    expect(loaded.server).toBe('https://kubernetes.default.svc');
    expect(loaded.namespace).toBe('ebb-system');
    expect((await loaded.credentials()).headers).toMatchObject({ authorization: 'Bearer a-token' });
  });

  it("gives the watcher the workers' egress, the thread's stop time and memory, and leaves the worker Deployment at 0", () => {
    const watcher = objectOf(objects, 'Deployment', 'ebb-watcher');
    const labels = (d: Manifest): Record<string, string> => d.spec?.template?.metadata?.labels ?? {};
    const egress = objectOf(objects, 'NetworkPolicy', 'ebb-worker-egress').spec?.['podSelector'] as LabelSelector;
    expect(selectorMatches(egress, labels(watcher))).toBe(true);
    expect(selectorMatches(egress, labels(objectOf(objects, 'Deployment', 'ebb-worker')))).toBe(true);
    expect(objectOf(objects, 'Deployment', 'ebb-worker').spec?.replicas).toBe(0);
    const env = parseWatcherConfig(envOf(objects, 'ebb-watcher', { 'ebb-redis/password': 'pw' })).workerThread?.env ?? {};
    const pod = watcher.spec?.template?.spec;
    expect((pod?.terminationGracePeriodSeconds ?? 30) * 1_000).toBeGreaterThanOrEqual(parseWorkerConfig(env).shutdownTimeoutMs + 5_000);
    expect(pod?.containers?.[0]?.resources?.limits?.memory).toBe('768Mi');
  });
});
