/**
 * Memory at fleet scale: RSS of `ebb watcher` and `ebb worker` with 10,000 Apps + 30,000 pods and
 * at twice that, the cost per additional watched object, and kube-controller-manager's RSS with the same
 * fleet as StatefulSets (its informers cache every pod).
 *
 *   node bench/fleet-memory.ts [--apps 10000] [--pods-per-app 3] [--steps 2] [--namespaces 10] [--parallel 48]
 *                              [--sides ebb,sts] [--dist] [--no-fresh] [--worker-node-options='<NODE_OPTIONS>']
 *
 * One private control plane per side, one after the other. Each step adds `--apps` workloads and their pods,
 * created directly (in parallel) and owned by them through a controller ownerReference: Apps (rolling update
 * paused, so the worker has nothing to roll) on the ebb side, StatefulSets (partition = replicas, the same) on
 * the other, both with podManagementPolicy Parallel. The template names a scheduler nobody serves, so every
 * pod stays Pending and nothing rewrites it; a pod the controller created first is left as it is.
 * ebb side: the watcher (the manifest's NODE_OPTIONS) runs from the start. After each step's objects exist,
 * a worker (the manifest's NODE_OPTIONS) starts and reconciles every App; once every process has
 * been quiet for 10 s, their RSS (and the worker's peak RSS) is read and the worker stops (so it never races the benchmark to create
 * pods). Then a second, fresh watcher lists everything from scratch and its RSS is read (off: --no-fresh).
 * StatefulSet side: kube-controller-manager with its statefulset controller, read the same way.
 */
import { parseArgs } from 'node:util';
import { API_VERSION, APP_KIND, appRef } from '../src/api/group.ts';
import { Label } from '../src/api/keys.ts';
import { sleep, waitFor } from '../src/common/wait.ts';
import { isKubeError } from '../src/kube/errors.ts';
import { core, type ResourceRef } from '../src/kube/paths.ts';
import { benchEbbEnv } from './lib/ebb-env.ts';
import { manifestNodeOptions } from './lib/manifest-options.ts';
import { table } from './lib/report.ts';
import {
  cpuMeter,
  createNamespace,
  inParallel,
  memoryOf,
  podlessApp,
  spawnEbb,
  startBenchCluster,
  type BenchCluster,
  type BenchProcess,
} from './watcher-lib.ts';

const { values: args } = parseArgs({
  options: {
    apps: { type: 'string', default: '10000' },
    'pods-per-app': { type: 'string', default: '3' },
    steps: { type: 'string', default: '2' },
    namespaces: { type: 'string', default: '10' },
    parallel: { type: 'string', default: '48' },
    sides: { type: 'string', default: 'ebb,sts' },
    'worker-node-options': { type: 'string' },
    dist: { type: 'boolean', default: false },
    'no-fresh': { type: 'boolean', default: false },
  },
});
const APPS = Number(args.apps);
const PODS = Number(args['pods-per-app']);
const STEPS = Number(args.steps);
const NAMESPACES = Number(args.namespaces);
const PARALLEL = Number(args.parallel);
const WATCHER_NODE_OPTIONS = manifestNodeOptions('watcher');
/** The worker's NODE_OPTIONS: the manifest's, unless `--worker-node-options` names others (to weigh a change). */
const WORKER_NODE_OPTIONS = args['worker-node-options'] ?? manifestNodeOptions('worker');
const STS_REF = (ns: string): ResourceRef => ({ group: 'apps', version: 'v1', resource: 'statefulsets', namespace: ns });

const UNSERVED_SCHEDULER = 'ebb-bench-unscheduled';

type Side = 'ebb' | 'sts';
interface Reading {
  side: Side;
  apps: number;
  pods: number;
  /** MiB by process name. */
  rss: Record<string, number>;
  settleS: number;
}

const log = (text: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${text}\n`);

/** The workload of one step: an App (rollout paused) or a StatefulSet (partition = replicas). */
function workload(side: Side, name: string): Record<string, unknown> {
  // The controller may create a pod before the benchmark does: it then stays Pending just the same.
  const template = {
    metadata: { labels: { app: name } },
    spec: { schedulerName: UNSERVED_SCHEDULER, containers: [{ name: 'web', image: 'registry.example.com/web:1' }] },
  };
  if (side === 'ebb') {
    const app = podlessApp(name) as { spec: Record<string, unknown> };
    return {
      ...app,
      spec: {
        ...app.spec,
        replicas: PODS,
        podManagementPolicy: 'Parallel',
        template,
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true } },
      },
    };
  }
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas: PODS,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: PODS } },
      template,
    },
  };
}

function pod(side: Side, owner: { name: string; uid: string }, i: number): Record<string, unknown> {
  const name = `${owner.name}-${i}`;
  const ownerRef = side === 'ebb' ? { apiVersion: API_VERSION, kind: APP_KIND } : { apiVersion: 'apps/v1', kind: 'StatefulSet' };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: { app: owner.name, [Label.podName]: name, [Label.podIndex]: String(i), ...(side === 'ebb' ? { [Label.app]: owner.name } : {}) },
      ownerReferences: [{ ...ownerRef, name: owner.name, uid: owner.uid, controller: true }],
    },
    spec: {
      hostname: name,
      subdomain: owner.name,
      schedulerName: UNSERVED_SCHEDULER,
      automountServiceAccountToken: false,
      containers: [{ name: 'web', image: 'registry.example.com/web:1' }],
    },
  };
}

/** Creates workloads [from, from + APPS) and their pods. */
async function addStep(cluster: BenchCluster, side: Side, namespaces: string[], from: number): Promise<void> {
  const t0 = Date.now();
  const owners: { ns: string; name: string; uid: string }[] = [];
  const idx = Array.from({ length: APPS }, (_, i) => from + i);
  await inParallel(idx, PARALLEL, async (i) => {
    const ns = namespaces[i % namespaces.length] ?? 'default';
    const ref = side === 'ebb' ? appRef(ns) : STS_REF(ns);
    const created = await cluster.rest.create<{ metadata: { name: string; uid: string } }>(ref, workload(side, `w-${i}`));
    owners.push({ ns, ...created.metadata });
  });
  const t1 = Date.now();
  const pods = owners.flatMap((o) => Array.from({ length: PODS }, (_, i) => ({ o, i })));
  await inParallel(pods, PARALLEL, ({ o, i }) =>
    cluster.rest.create(core('pods', o.ns), pod(side, o, i)).catch((err: unknown) => {
      if (!isKubeError(err, 'AlreadyExists')) throw err;
    }),
  );
  log(
    `${side}: created ${owners.length} workloads in ${((t1 - t0) / 1000).toFixed(0)} s and ${pods.length} pods in ${((Date.now() - t1) / 1000).toFixed(0)} s`,
  );
}

/** Waits until the processes together used less than 0.3 CPU-seconds in 10 s (every event handled). */
async function settle(pids: Record<string, number>): Promise<number> {
  const t0 = Date.now();
  await waitFor(
    async () => {
      const meter = await cpuMeter(pids);
      await sleep(10_000);
      const used = Object.values(await meter()).reduce((a, b) => a + b, 0);
      return used < 0.3 ? true : undefined;
    },
    { timeoutMs: 1_800_000, intervalMs: 0, what: 'the controllers to go quiet' },
  );
  return (Date.now() - t0) / 1000;
}

async function rss(pids: Record<string, number>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) out[name] = (await memoryOf(pid)).rssMiB;
  return out;
}

function startWatcher(env: Record<string, string>): BenchProcess {
  const w = spawnEbb('watcher', { ...env, NODE_OPTIONS: WATCHER_NODE_OPTIONS }, (l) => l.msg === 'listed', { dist: args.dist });
  return w;
}

async function listedAll(w: BenchProcess): Promise<void> {
  await w.waitForLog((l) => l.msg === 'listed' && String(l['source']).startsWith('pods'), 600_000, 'pods listed');
  await w.waitForLog((l) => l.msg === 'listed' && String(l['source']).startsWith('apps'), 600_000, 'apps listed');
}

async function runSide(side: Side): Promise<Reading[]> {
  const cluster = await startBenchCluster(side === 'sts' ? { extraControllers: ['statefulset-controller'] } : {});
  const readings: Reading[] = [];
  const procs: BenchProcess[] = [];
  try {
    const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `mem-${i}`);
    for (const ns of namespaces) await createNamespace(cluster.rest, ns);
    const kcm = cluster.pids['kube-controller-manager'] ?? -1;
    const env = { ...benchEbbEnv(cluster), EBB_LOG_LEVEL: 'info' };
    const pids: Record<string, number> = side === 'sts' ? { 'kube-controller-manager': kcm } : {};
    if (side === 'ebb') {
      const watcher = startWatcher(env);
      procs.push(watcher);
      await listedAll(watcher);
      pids['ebb watcher'] = watcher.pid;
    }
    const settleS = await settle(pids);
    readings.push({ side, apps: 0, pods: 0, rss: await rss(pids), settleS });
    for (let step = 1; step <= STEPS; step++) {
      await addStep(cluster, side, namespaces, (step - 1) * APPS);
      const reading: Reading = { side, apps: step * APPS, pods: step * APPS * PODS, rss: {}, settleS: 0 };
      if (side === 'ebb') {
        // The worker runs once the step's objects exist (it would otherwise race the benchmark to create the
        // pods); it reconciles every App the watcher enqueued, then its RSS is read and it stops.
        const worker = spawnEbb('worker', { ...env, NODE_OPTIONS: WORKER_NODE_OPTIONS }, () => false, { dist: args.dist });
        procs.push(worker);
        await worker.waitForLog((l) => l.msg === 'worker started', 60_000, 'worker started');
        reading.settleS = await settle({ ...pids, 'ebb worker': worker.pid });
        reading.rss = await rss({ ...pids, 'ebb worker': worker.pid });
        // Its high-water mark too: an App of thousands of pods is read whole at each reconcile.
        reading.rss['ebb worker peak'] = (await memoryOf(worker.pid)).peakMiB;
        await worker.stop();
        if (!args['no-fresh']) {
          const fresh = startWatcher(env);
          procs.push(fresh);
          const t0 = Date.now();
          await listedAll(fresh);
          const listS = (Date.now() - t0) / 1000;
          await settle({ ...pids, fresh: fresh.pid });
          reading.rss['fresh ebb watcher'] = (await memoryOf(fresh.pid)).rssMiB;
          log(`fresh watcher listed everything in ${listS.toFixed(1)} s`);
          await fresh.stop();
        }
      } else {
        reading.settleS = await settle(pids);
        reading.rss = await rss(pids);
      }
      readings.push(reading);
      log(`${side} step ${step}: ${JSON.stringify(reading)}`);
    }
  } finally {
    for (const p of procs) await p.stop();
    await cluster.stop();
  }
  return readings;
}

function report(readings: Reading[]): string {
  const names = [...new Set(readings.flatMap((r) => Object.keys(r.rss)))];
  const rows = readings.map((r) => [
    `${r.side}`,
    String(r.apps),
    String(r.pods),
    ...names.map((n) => (n in r.rss ? (r.rss[n] ?? 0).toFixed(1) : '–')),
    r.settleS.toFixed(0),
  ]);
  const out = [table(['Side', 'Workloads', 'Pods', ...names.map((n) => `${n} RSS MiB`), 'settle s'], rows), ''];
  // Cost per additional watched object (workloads + pods) between consecutive steps.
  const perObject: string[][] = [];
  for (const side of ['ebb', 'sts'] as const) {
    const mine = readings.filter((r) => r.side === side && r.apps > 0);
    for (let i = 1; i < mine.length; i++) {
      const [a, b] = [mine[i - 1], mine[i]];
      if (!a || !b) continue;
      const objects = b.apps + b.pods - (a.apps + a.pods);
      for (const n of names) {
        const d = (b.rss[n] ?? Number.NaN) - (a.rss[n] ?? Number.NaN);
        if (Number.isFinite(d)) perObject.push([side, `${a.apps} → ${b.apps}`, n, d.toFixed(1), ((d * 1024) / objects).toFixed(3)]);
      }
    }
  }
  out.push(table(['Side', 'Workloads', 'Process', 'Δ RSS MiB', 'KiB per additional watched object (workload or pod)'], perObject));
  return `${out.join('\n')}\n`;
}

const readings: Reading[] = [];
for (const side of args.sides.split(',') as Side[]) readings.push(...(await runSide(side)));
process.stdout.write(report(readings));
