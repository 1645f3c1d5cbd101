/**
 * Watcher memory at scale: RSS of `ebb watcher` with 10,000 Apps and 30,000 pods present.
 *
 *   node bench/watcher-memory.ts [--apps 10000] [--pods-per-app 3] [--namespaces 10] [--parallel 48]
 *                                [--event-burst 3000] [--node-options=--max-old-space-size=64] [--dist]
 *                                [--watcher-env EBB_SCALER=false ...]
 *
 * A private control plane and Redis. Apps (no pods of their own: replicas 0) and pods labelled
 * `apps.ebb.dev/app=<app>` are created directly, in parallel batches; the pods name a scheduler that does
 * not exist (and a nodeSelector that matches nothing), so they stay Pending and nothing rewrites them. No
 * worker runs: the reconcile jobs simply wait in Redis. Then the watcher starts (all namespaces) and its
 * RSS is sampled from /proc every 250 ms through: the initial list of everything, a resync of all 10,000
 * Apps, and a burst of pod updates (watch events). Reported: RSS after each phase and the peak (VmHWM).
 * `--dist` runs the compiled watcher (`npm run build` first), as the container image does; without it the
 * TypeScript sources run through Node's type stripping, which costs about 20 MiB more.
 */
import { parseArgs } from 'node:util';
import { appRef } from '../src/api/group.ts';
import { Label } from '../src/api/keys.ts';
import { sleep, waitFor } from '../src/common/wait.ts';
import { core } from '../src/kube/paths.ts';
import { PatchType } from '../src/kube/rest.ts';
import { createNamespace, inParallel, podlessApp, memoryOf, metric, rssSampler, spawnEbb, startBenchCluster, type BenchProcess } from './watcher-lib.ts';

const { values: args } = parseArgs({
  options: {
    apps: { type: 'string', default: '10000' },
    'pods-per-app': { type: 'string', default: '3' },
    namespaces: { type: 'string', default: '10' },
    parallel: { type: 'string', default: '48' },
    'event-burst': { type: 'string', default: '3000' },
    /** NODE_OPTIONS for the watcher process, e.g. V8 heap limits. */
    'node-options': { type: 'string', default: '' },
    dist: { type: 'boolean', default: false },
    /** Extra environment for the watcher (repeatable), e.g. EBB_SCALER=false. */
    'watcher-env': { type: 'string', multiple: true, default: [] },
  },
});
const APPS = Number(args.apps);
const PODS_PER_APP = Number(args['pods-per-app']);
const NAMESPACES = Number(args.namespaces);
const PARALLEL = Number(args.parallel);
const RESYNC_S = 20;

interface Target {
  ns: string;
  app: string;
}

function podObject(app: string, i: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${app}-${i}`, labels: { [Label.app]: app, app } },
    spec: {
      schedulerName: 'ebb-bench-unscheduled',
      nodeSelector: { 'bench.ebb.dev/nowhere': 'true' },
      automountServiceAccountToken: false,
      containers: [{ name: 'web', image: 'registry.example.com/web:1' }],
    },
  };
}

function log(text: string): void {
  process.stdout.write(`${new Date().toISOString()} ${text}\n`);
}

async function phase(watcher: BenchProcess, port: number, name: string, since: number): Promise<void> {
  const mem = await memoryOf(watcher.pid);
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const heap = metric(metrics, 'ebb_watcher_nodejs_heap_size_used_bytes') / 2 ** 20;
  log(
    `${name}: ${((Date.now() - since) / 1000).toFixed(1)} s; RSS ${mem.rssMiB.toFixed(1)} MiB, peak (VmHWM) ${mem.peakMiB.toFixed(1)} MiB, JS heap used ${heap.toFixed(1)} MiB`,
  );
}

async function main(): Promise<void> {
  const cluster = await startBenchCluster();
  try {
    const { rest } = cluster;
    const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `mem-${i}`);
    for (const ns of namespaces) await createNamespace(rest, ns);
    const targets: Target[] = Array.from({ length: APPS }, (_, i) => ({ ns: namespaces[i % NAMESPACES]!, app: `app-${i}` }));
    let t = Date.now();
    await inParallel(targets, PARALLEL, ({ ns, app }) => rest.create(appRef(ns), podlessApp(app)));
    log(`created ${APPS} Apps in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    t = Date.now();
    const pods = targets.flatMap((x) => Array.from({ length: PODS_PER_APP }, (_, i) => ({ ...x, i })));
    await inParallel(pods, PARALLEL, ({ ns, app, i }) => rest.create(core('pods', ns), podObject(app, i)));
    log(`created ${pods.length} pods in ${((Date.now() - t) / 1000).toFixed(1)} s`);

    const extra = Object.fromEntries(args['watcher-env'].map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    const env = {
      KUBECONFIG: cluster.kubeconfig,
      EBB_REDIS_URL: cluster.redisUrl,
      EBB_RESYNC_PERIOD: `${RESYNC_S}s`,
      NODE_OPTIONS: args['node-options'],
      ...extra,
    };
    const started = Date.now();
    const watcher = spawnEbb('watcher', env, (l) => l.msg === 'listed' || l.msg === 'resync enqueued', { dist: args.dist });
    const sample = rssSampler({ watcher: watcher.pid });
    const port = (await watcher.waitForLog((l) => l.msg === 'watcher started', 30_000, 'watcher started'))['port'] as number;
    await phase(
      watcher,
      port,
      `watcher started (${args.dist ? 'dist/' : 'src/'}, NODE_OPTIONS=${JSON.stringify(args['node-options'])}, env ${JSON.stringify(extra)})`,
      started,
    );
    await watcher.waitForLog((l) => l.msg === 'listed' && String(l['source']).startsWith('pods'), 300_000, 'pods listed');
    await watcher.waitForLog((l) => l.msg === 'listed' && String(l['source']).startsWith('apps'), 300_000, 'apps listed');
    await phase(watcher, port, 'initial list of all Apps and pods enqueued', started);
    const resync = await watcher.waitForLog((l) => l.msg === 'resync enqueued', (RESYNC_S + 120) * 1000, 'a resync');
    await phase(watcher, port, `first resync (${String(resync['objects'])} objects) done`, started);

    const burst = pods.slice(0, Number(args['event-burst']));
    const burstStart = Date.now();
    await inParallel(burst, PARALLEL, ({ ns, app, i }) =>
      rest.patch(core('pods', ns, `${app}-${i}`), { metadata: { annotations: { 'bench.ebb.dev/touch': String(Date.now()) } } }, PatchType.merge),
    );
    await waitFor(
      async () => {
        const m = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return metric(m, 'ebb_watch_events_total') >= burst.length ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: 'the watcher to receive the pod events' },
    );
    await phase(watcher, port, `burst of ${burst.length} pod updates received (${((Date.now() - burstStart) / 1000).toFixed(1)} s)`, started);
    await sleep(5_000);
    await phase(watcher, port, 'settled 5 s later', started);
    sample.stop();
    log(`max sampled RSS ${(sample.max()['watcher'] ?? 0).toFixed(1)} MiB`);
    await watcher.stop();
  } finally {
    await cluster.stop();
  }
}

await main();
