/**
 * App rollout benchmark: apiserver requests per App reconcile and per pod updated, and the time of a
 * RollingUpdate (recreate, maxUnavailable 1) by ebb vs the upstream StatefulSet controller
 * (kube-controller-manager's statefulset-controller) on one sandbox with the realistic simulated kubelet.
 *
 *   node bench/app-rollout.ts [--replicas 20] [--runs 3] [--nodes 4] [--grace 5] [--touches 5]
 *                             [--controllers ebb,sts] [--policies OrderedReady,Parallel] [--json out.json] [--keep]
 *
 * --json writes every measurement (request windows by key, pod timelines' breakdown, ebb queue metrics);
 * `--report out.json` prints the tables of a saved run again (no sandbox). --keep keeps the sandbox
 * directory (control-plane logs) instead of removing it. --trace classifies every ebb reconcile by what it
 * wrote and counts ebb's requests client-side (lib/ebb-trace.ts).
 *
 * Method (details in BENCHMARKS.md): around each measured window the benchmark reads `apiserver_request_total`
 * and the client-side counts of the simulated kubelets' and its own KubeRest; the difference is split by
 * verb/resource into controller, scheduler, watch and background (lib/attribution.ts). Rollout time runs from
 * the template change to the watch event after which all pods run the new image, are Ready and none is
 * terminating; a per-pod timeline splits it into controller and kubelet segments (lib/pod-timeline.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sleep, waitFor } from '../src/common/wait.ts';
import { createLogger } from '../src/common/log.ts';
import { core } from '../src/kube/paths.ts';
import { KubeRest, loadKubeConfig } from '../src/kube/rest.ts';
import { startSandbox, type Sandbox } from '../harness/sandbox/sandbox.ts';
import { realisticProfile } from '../harness/sandbox/node/timings.ts';
import { startWatcher, type RunningWatcher } from '../src/watcher/watcher.ts';
import { parseWatcherConfig } from '../src/watcher/config.ts';
import { startWorker, type RunningWorker } from '../src/workers/worker.ts';
import { parseWorkerConfig } from '../src/workers/config.ts';
import { reconcilers } from '../src/workers/reconcilers.ts';
import { ebbWindow, readEbbWatcher, readEbbWorker } from './lib/ebb-metrics.ts';
import { EbbTrace, summarizeTrace } from './lib/ebb-trace.ts';
import { allAt, breakdown, PodTimeline } from './lib/pod-timeline.ts';
import { countRequests, diff, readApiserverRequests, sum, window, type RequestSnapshot } from './lib/requests.ts';
import { fromJson, printReport, toJson, type Measured, type Saved, type TraceResult } from './lib/rollout-report.ts';
import { benchEbbEnv } from './lib/ebb-env.ts';
import { attribute } from './lib/attribution.ts';
import {
  benchImage,
  createWorkload,
  deleteWorkload,
  selectorOf,
  setImage,
  touch,
  waitStatusSettled,
  type ControllerKind,
  type Policy,
  type Workload,
} from './lib/workloads.ts';

const { values: opt } = parseArgs({
  options: {
    replicas: { type: 'string', default: '20' },
    runs: { type: 'string', default: '3' },
    nodes: { type: 'string', default: '4' },
    grace: { type: 'string', default: '5' },
    touches: { type: 'string', default: '5' },
    controllers: { type: 'string', default: 'ebb,sts' },
    policies: { type: 'string', default: 'OrderedReady,Parallel' },
    json: { type: 'string' },
    keep: { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
    report: { type: 'string' },
  },
});
const REPLICAS = Number(opt.replicas);
const RUNS = Number(opt.runs);
const GRACE = Number(opt.grace);
const TOUCHES = Number(opt.touches);
const CONTROLLERS = opt.controllers.split(',') as ControllerKind[];
const POLICIES = opt.policies.split(',') as Policy[];
/** Quiet time before closing a window, so the controller's last status write lands inside it. */
const QUIET_MS = 3_000;
const TOUCH_GAP_MS = 2_000;

const clock = (): number => performance.timeOrigin + performance.now();
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);

interface Env {
  sb: Sandbox;
  rest: KubeRest;
  ns: string;
  watcher: RunningWatcher;
  worker: RunningWorker;
  snapshot(): Promise<RequestSnapshot>;
  trace: EbbTrace | undefined;
}

async function ebbReconciles(env: Env, w: Workload): Promise<number> {
  return w.kind === 'ebb' ? (await readEbbWorker(env.worker.httpPort)).reconciles : 0;
}

async function steadyState(env: Env, w: Workload): Promise<Measured['steady']> {
  const before = await env.snapshot();
  const r0 = await ebbReconciles(env, w);
  for (let i = 0; i < TOUCHES; i++) {
    await touch(env.rest, w, `${i}-${randomBytes(2).toString('hex')}`);
    await sleep(TOUCH_GAP_MS);
  }
  await sleep(QUIET_MS);
  const win = window(before, await env.snapshot());
  const reconciles = w.kind === 'ebb' ? (await ebbReconciles(env, w)) - r0 : TOUCHES;
  return { touches: TOUCHES, reconciles, window: win };
}

/** ebb only: what the watcher's periodic resync costs per App (enqueue every known object, low priority). */
async function resyncCost(env: Env, w: Workload): Promise<Measured['resync']> {
  const before = await env.snapshot();
  const r0 = await ebbReconciles(env, w);
  for (let i = 0; i < TOUCHES; i++) {
    await env.watcher.resync();
    await sleep(TOUCH_GAP_MS);
  }
  await sleep(QUIET_MS);
  const win = window(before, await env.snapshot());
  return { count: TOUCHES, reconciles: (await ebbReconciles(env, w)) - r0, window: win };
}

async function rollout(env: Env, w: Workload, timeline: PodTimeline): Promise<Measured['rollout']> {
  const image = benchImage(`v2-${w.name}-${randomBytes(3).toString('hex')}`);
  const before = await env.snapshot();
  const e0 = w.kind === 'ebb' ? await readEbbWorker(env.worker.httpPort) : undefined;
  const w0 = w.kind === 'ebb' ? await readEbbWatcher(env.watcher.httpPort) : undefined;
  const load0 = loadavg()[0]!;
  const wall0 = Date.now();
  const t0 = clock();
  await setImage(env.rest, w, { image, graceSeconds: GRACE });
  const done = await timeline.until(allAt(w.name, w.replicas, image), 900_000, `${w.name}: all pods at ${image} and Ready`);
  const load1 = loadavg()[0]!;
  await waitStatusSettled(env.rest, w, 120_000);
  const statusLagMs = clock() - done;
  await sleep(QUIET_MS);
  const win = window(before, await env.snapshot());
  const e1 = w.kind === 'ebb' ? await readEbbWorker(env.worker.httpPort) : undefined;
  const w1 = w.kind === 'ebb' ? await readEbbWatcher(env.watcher.httpPort) : undefined;
  const trace = w.kind === 'ebb' && env.trace ? traceOf(env.trace, wall0, Date.now()) : undefined;
  const records = [...timeline.records.values()];
  const nodes = new Set(records.filter((r) => r.image === image).map((r) => r.node)).size;
  return {
    ms: done - t0,
    statusLagMs,
    window: win,
    breakdown: breakdown(records, w.name, w.replicas, t0, image),
    nodes,
    load: [load0, load1],
    ...(e0 && e1 && w0 && w1 ? { ebb: { ...ebbWindow(e0, e1), watcher: diff(w1, w0), ...(trace ? { trace } : {}) } } : {}),
  };
}

function traceOf(trace: EbbTrace, from: number, to: number): TraceResult {
  return { clientRequests: trace.requestsIn(from, to), classes: summarizeTrace(trace.reconcilesIn(from, to)) };
}

async function measure(env: Env, kind: ControllerKind, policy: Policy, run: number): Promise<Measured> {
  const w: Workload = { kind, policy, namespace: env.ns, name: `${kind}-${policy === 'OrderedReady' ? 'or' : 'par'}-${run}`, replicas: REPLICAS };
  const timeline = new PodTimeline(env.rest, env.ns, selectorOf(w));
  await timeline.start();
  try {
    const image = benchImage('v1');
    const t0 = clock();
    await createWorkload(env.rest, w, { image, graceSeconds: GRACE });
    await timeline.until(allAt(w.name, w.replicas, image), 600_000, `${w.name}: all pods Ready`);
    const setupMs = clock() - t0;
    await waitStatusSettled(env.rest, w, 120_000);
    await sleep(QUIET_MS);
    progress(`${w.name}: ${w.replicas} pods Ready in ${(setupMs / 1000).toFixed(1)} s; steady-state touches`);
    const steady = await steadyState(env, w);
    const resync = kind === 'ebb' ? await resyncCost(env, w) : undefined;
    progress(`${w.name}: rolling update`);
    const ro = await rollout(env, w, timeline);
    progress(`${w.name}: rollout ${(ro.ms / 1000).toFixed(1)} s, controller requests ${sum(attribute(ro.window.residual, kind).controller)}; cleaning up`);
    return { run, kind, policy, name: w.name, setupMs, steady, ...(resync ? { resync } : {}), rollout: ro };
  } finally {
    await timeline.stop();
    await deleteWorkload(env.rest, w, 180_000);
  }
}

async function setup(dir: string): Promise<Env> {
  const log = createLogger('bench', 'warn');
  const sb = await startSandbox({ dir, nodes: Number(opt.nodes), log, timings: realisticProfile, extraControllers: ['statefulset-controller'] });
  // The sandbox's client is the simulated kubelets' (and the PV provisioner's); the benchmark uses its own.
  const trace = opt.trace ? new EbbTrace() : undefined;
  trace?.hookClients();
  const kubelet = countRequests(sb.rest);
  const rest = new KubeRest(loadKubeConfig(sb.kubeconfig));
  const bench = countRequests(rest);
  const ns = `bench-${randomBytes(3).toString('hex')}`;
  await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await waitFor(() => rest.get(core('serviceaccounts', ns, 'default')), { timeoutMs: 60_000, what: 'default ServiceAccount' });
  const env = benchEbbEnv(sb, [ns]);
  const watcher = await startWatcher(parseWatcherConfig(env), log);
  const worker = await startWorker(parseWorkerConfig(env), trace ? trace.workerLogger() : log, reconcilers());
  const snapshot = async (): Promise<RequestSnapshot> => {
    const { total, conflicts } = await readApiserverRequests(rest);
    return { apiserver: total, conflicts, kubelet: kubelet.snapshot(), bench: bench.snapshot() };
  };
  return { sb, rest, ns, watcher, worker, snapshot, trace };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-bench-'));
  const started = new Date().toISOString();
  const loadStart = loadavg();
  progress(`sandbox in ${dir}; ${REPLICAS} replicas, ${RUNS} runs, ${opt.nodes} nodes, grace ${GRACE} s; load ${loadStart.map((n) => n.toFixed(2)).join(' ')}`);
  const env = await setup(dir);
  const measurements: Measured[] = [];
  try {
    // Before any workload: what the control plane and an idle ebb cost (the background of every window).
    const idleSeconds = 20;
    const idle0 = await env.snapshot();
    await sleep(idleSeconds * 1000);
    const idle = { seconds: idleSeconds, window: window(idle0, await env.snapshot()) };
    for (let run = 1; run <= RUNS; run++) {
      for (const policy of POLICIES) for (const kind of CONTROLLERS) measurements.push(await measure(env, kind, policy, run));
    }
    const meta = {
      replicas: REPLICAS,
      runs: RUNS,
      nodes: Number(opt.nodes),
      graceSeconds: GRACE,
      touches: TOUCHES,
      started,
      finished: new Date().toISOString(),
      load: { start: loadStart, end: loadavg() },
    };
    const saved: Saved = { meta, idle, measurements };
    process.stdout.write(printReport(saved));
    if (opt.json) await writeFile(opt.json, toJson(saved));
    progress(`done${opt.json ? `; raw results in ${opt.json}` : ''}`);
  } finally {
    await env.worker.stop();
    await env.watcher.stop();
    await env.sb.stop();
    if (!opt.keep) await rm(dir, { recursive: true, force: true });
  }
}

if (opt.report) process.stdout.write(printReport(fromJson(await readFile(opt.report, 'utf8'))));
else await main();
