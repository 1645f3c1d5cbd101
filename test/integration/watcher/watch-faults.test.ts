/**
 * Watch faults lose no App. A private control plane and Redis (this file restarts the apiserver and
 * compacts etcd); `ebb watcher` reaches the apiserver through a TCP proxy that can pause or reset its
 * connections; one `ebb worker` talks to the apiserver directly. In each case Apps are created and edited
 * during the fault, and afterwards every App's latest generation is observed.
 *  (a) forced 410: the watcher's connections are frozen while Apps change, etcd is compacted to its head and
 *      the apiserver's watch cache starts over, so the watcher resumes from a resourceVersion that is too old
 *      (the test checks the apiserver answers 410 for it) and must re-list;
 *  (b) killed watch connections: every open connection of the watcher is reset, again and again, mid-stream;
 *  (c) an apiserver restart while Apps are being edited.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { createLogger } from '../../../src/common/log.ts';
import { core } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { startControlPlane, type ControlPlane } from '../../../harness/sandbox/control-plane.ts';
import { installCrds } from '../../../harness/sandbox/crds.ts';
import { CRD_DIR, DEFAULT_BIN_DIR } from '../../../harness/sandbox/paths.ts';
import { startRedis, type RedisServer } from '../../../harness/sandbox/redis.ts';
import {
  appNames,
  createApps,
  ebbEnv,
  editApp,
  kubeconfigServer,
  listApps,
  printLogsOnFailure,
  proxiedKubeconfig,
  retrying,
  spawnEbb,
  startTcpProxy,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
  type LogLine,
  type TcpProxy,
} from './helpers.ts';

const APPS = 10;
const LATE = 5;

interface PrivateCluster {
  dir: string;
  controlPlane: ControlPlane;
  redis: RedisServer;
  stop(): Promise<void>;
}

/** A control plane and Redis of this file's own (about 5 s), so restarting them disturbs no other test. */
async function startPrivateCluster(): Promise<PrivateCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-wt-'));
  const [controlPlane, redis] = await Promise.all([
    startControlPlane({ dir, binDir: DEFAULT_BIN_DIR, log: createLogger('private-cluster', 'warn') }),
    startRedis({ dir: join(dir, 'redis') }),
  ]);
  await installCrds(controlPlane.rest, CRD_DIR);
  return {
    dir,
    controlPlane,
    redis,
    stop: async () => {
      await redis.stop();
      await controlPlane.stop();
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}

/** etcd's current revision, through its HTTP/JSON gateway. */
async function etcdRevision(etcdUrl: string): Promise<number> {
  const res = await fetch(`${etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('/').toString('base64') }) });
  const body = (await res.json()) as { header: { revision: string } };
  return Number(body.header.revision);
}

/** Compacts etcd's history up to `revision` (physical: returns once the compaction is applied). */
async function etcdCompact(etcdUrl: string, revision: number): Promise<void> {
  const res = await fetch(`${etcdUrl}/v3/kv/compaction`, { method: 'POST', body: JSON.stringify({ revision: String(revision), physical: true }) });
  if (!res.ok) throw new Error(`etcd compaction to ${revision} failed: HTTP ${res.status} ${await res.text()}`);
}

/** What the apiserver answers to a watch of Apps in `ns` from `rv`: 'gone' (410), 'ok', retried while busy. */
async function watchFrom(rest: KubeRest, ns: string, rv: string): Promise<'gone' | 'ok'> {
  return waitFor(
    async () => {
      const url = rest.url(`/apis/apps.ebb.dev/v1alpha1/namespaces/${ns}/apps`, { watch: 1, resourceVersion: rv, timeoutSeconds: 1 });
      const { headers, dispatcher } = await rest.credentials();
      const res = await fetch(url, { headers, dispatcher });
      const text = await res.text();
      if (res.status === 410 || /"code":410/.test(text)) return 'gone' as const;
      return res.status === 200 ? ('ok' as const) : undefined; // 429 while the watch cache initializes
    },
    { timeoutMs: 30_000, intervalMs: 250, what: `a watch answer from resourceVersion ${rv}` },
  );
}

describe('watch faults lose no App', () => {
  let cluster: PrivateCluster;
  let proxy: TcpProxy;
  let watcher: EbbProcess;
  let worker: EbbProcess;
  let rest: KubeRest;

  beforeAll(async () => {
    cluster = await startPrivateCluster();
    rest = cluster.controlPlane.rest;
    proxy = await startTcpProxy(await kubeconfigServer(cluster.controlPlane.kubeconfig));
    const viaProxy = await proxiedKubeconfig(cluster.controlPlane.kubeconfig, join(cluster.dir, 'proxied.kubeconfig'), proxy.port);
    const common = { redisUrl: cluster.redis.url, prefix: uniquePrefix('faults'), namespaces: [] };
    // All namespaces: this control plane is private. No resync: recovery must come from the watch loop.
    // A 20 s watchdog (default 3 m) bounds how long a request stuck on a connection the faults broke can
    // hold a source up, so such a case is recovered within the test's waits instead of failing it.
    watcher = spawnEbb('watcher', ebbEnv({ ...common, kubeconfig: viaProxy }, { EBB_RESYNC_PERIOD: '0', EBB_WATCHDOG: '20s' }));
    worker = spawnEbb('worker', ebbEnv({ ...common, kubeconfig: cluster.controlPlane.kubeconfig }, { EBB_WORKER_CONCURRENCY: '8' }));
    await Promise.all([watcher.httpPort(), worker.httpPort()]);
  });

  afterAll(async () => {
    await Promise.all([watcher?.stop(), worker?.stop()]);
    await proxy?.stop();
    await cluster?.stop();
  });

  async function namespaceWithApps(name: string): Promise<string> {
    printLogsOnFailure([watcher, worker], 60);
    await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await createApps(rest, name, appNames(APPS));
    await waitAllObserved(rest, name, APPS);
    return name;
  }

  const since = (mark: number, pred: (l: LogLine) => boolean): LogLine[] => watcher.logs.slice(mark).filter(pred);

  it('(a) forced 410: resuming from a compacted, too old resourceVersion re-lists and loses nothing', async () => {
    const ns = await namespaceWithApps('faults-a');
    const mark = watcher.logs.length;
    proxy.pause();
    await sleep(200);
    // Nothing newer than this can have reached the watcher: its resume point is at most this old.
    const { resourceVersion: frozenAt } = await listApps(rest, ns);
    for (const name of appNames(APPS)) await editApp(rest, ns, name);
    await createApps(rest, ns, appNames(LATE, 'late'));
    await etcdCompact(cluster.controlPlane.etcdUrl, await etcdRevision(cluster.controlPlane.etcdUrl));
    await cluster.controlPlane.restartApiserver();
    expect(await watchFrom(rest, ns, frozenAt), `a watch from ${frozenAt} is expired`).toBe('gone');
    await editApp(rest, ns, 'app-0');

    // The partition ends with its connections reset: whatever the old apiserver had sent is lost in
    // transit, so the watcher must resume from its old resourceVersion.
    proxy.resetAll();
    proxy.resume();
    await watcher.waitForLog(
      (l) =>
        l.source === 'apps' &&
        (l.msg === 'watch expired (410 Gone); re-listing' || (l.msg === 'list/watch failed; retrying' && /too old|Gone|Expired/i.test(String(l['error'])))),
      30_000,
      'the Apps watch to see 410 Gone',
    );
    await waitAllObserved(rest, ns, APPS + LATE, 60_000);
    expect(since(mark, (l) => l.msg === 'listed' && l['source'] === 'apps').length, 'the watcher re-listed Apps').toBeGreaterThan(0);
    expect(watcher.running()).toBe(true);
  });

  it('(b) killed watch connections: resets mid-stream lose no App', async () => {
    const ns = await namespaceWithApps('faults-b');
    const mark = watcher.logs.length;
    const acceptedBefore = proxy.accepted();
    let resets = 0;
    let stop = false;
    const killer = (async () => {
      while (!stop) {
        await sleep(300 + Math.random() * 300);
        resets += proxy.resetAll();
      }
    })();
    const editor = (async () => {
      for (let n = 0; !stop; n++) {
        await editApp(rest, ns, `app-${n % APPS}`);
        if (n % 20 === 5) await createApps(rest, ns, [`late-${Math.floor(n / 20)}`]);
        await sleep(40);
      }
    })();
    // The fault lasts until the watcher has had its watches cut, and come back, eight times (the edits go on meanwhile).
    await waitFor(() => (resets >= 8 && proxy.accepted() - acceptedBefore >= 8 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: 'eight resets and eight reconnections',
    });
    stop = true;
    await Promise.all([killer, editor]);
    const { apps } = await listApps(rest, ns);

    await waitAllObserved(rest, ns, apps.length, 60_000);
    expect(apps.length, 'Apps were created during the fault').toBeGreaterThan(APPS);
    expect(resets, 'connections reset').toBeGreaterThanOrEqual(5);
    expect(proxy.accepted() - acceptedBefore, 'the watcher reconnected').toBeGreaterThanOrEqual(5);
    expect(since(mark, (l) => l.msg === 'list/watch failed; retrying').length, 'the watcher noticed the broken watches').toBeGreaterThan(0);
    expect(watcher.running()).toBe(true);
  });

  it('(c) apiserver restart: Apps edited and created around the restart are all observed', async () => {
    const ns = await namespaceWithApps('faults-c');
    const mark = watcher.logs.length;
    let stop = false;
    let edits = 0;
    const editor = (async () => {
      for (let n = 0; !stop; n++) {
        await retrying(() => editApp(rest, ns, `app-${n % APPS}`));
        edits++;
        await sleep(100);
      }
    })();
    await sleep(500);
    await cluster.controlPlane.restartApiserver();
    await retrying(() => createApps(rest, ns, appNames(LATE, 'late')));
    await sleep(1_000);
    stop = true;
    await editor;

    await waitAllObserved(rest, ns, APPS + LATE, 90_000);
    expect(edits).toBeGreaterThan(5);
    expect(since(mark, (l) => l.msg === 'list/watch failed; retrying').length, 'the watcher saw the apiserver go away').toBeGreaterThan(0);
    expect(watcher.running() && worker.running()).toBe(true);
    // Apps written right after the restart are there (the wait above proves they were observed).
    expect((await rest.list(appRef(ns))).items.length).toBe(APPS + LATE);
  });
});
