/**
 * Fleet benchmark: N Apps × 3 replicas spread over namespaces and simulated nodes, then the same
 * fleet as StatefulSets run by kube-controller-manager's statefulset controller, one after the other on one
 * sandbox. Phases per side: create all → every pod Ready; a steady state with nothing changing; a rollout
 * wave (every workload gets a new image at once); delete all → every pod gone.
 *
 *   node bench/fleet.ts [--apps 1000] [--replicas 3] [--namespaces 10] [--nodes <auto>] [--steady-minutes 10]
 *                       [--sts-steady-minutes <steady-minutes>]
 *                       [--sides ebb,sts] [--policy OrderedReady] [--profile fast|realistic] [--parallel 32]
 *                       [--limit-minutes 45] [--dist] [--keep] [--json out.json] [--report out.json]
 *                       [--worker-node-options='<NODE_OPTIONS>'] [--kcm-qps 400] [--kcm-burst 800] [--kcm-default-limits]
 *                       [--workers keda|<n>] [--scale-down-seconds 300] [--jobs-per-worker <shipped>]
 *                       [--worker-env K=V ...] [--view true|false] [--cpu-prof DIR]
 *                       [--watcher-thread true|false] [--thread-backlog <n>] [--apiserver-prof DIR] [--apiserver-prof-seconds 30]
 *
 * ebb runs as the manifests run it: one `ebb watcher` (its KEDA scaler on) and `ebb worker` processes scaled as
 * KEDA would scale them for the watcher's backlog (lib/keda-scale.ts, lib/worker-pool.ts), each with its
 * manifest's NODE_OPTIONS, each its own process, so CPU and RSS are theirs alone. kube-controller-manager runs
 * at client limits that do not bind (`--kcm-qps`, `--kcm-burst`) unless `--kcm-default-limits`. Requests are
 * `apiserver_request_total` deltas minus the simulated kubelets' and the benchmark's own client-side counts
 * (lib/requests.ts), split by lib/attribution.ts. Per phase: wall time, requests by key, CPU-seconds per process (/proc), RSS (end of the
 * phase and the maximum sampled every second). `--limit-minutes` is a hard wall limit: when it passes, the
 * phases measured so far are printed and the benchmark stops. `--cpu-prof DIR` has every ebb process write a V8
 * CPU profile when it exits (DIR/watcher, DIR/worker; `node bench/cpuprofile-summary.ts DIR/worker` sums them);
 * the profiler's sampling adds CPU of its own, so a profiled run's CPU figures are not the unprofiled ones.
 * `--view true|false` sets EBB_VIEW (the shared view, `src/view/`) on the watcher and every worker alike (the
 * two must agree: the watcher writes the view, the workers read it); unset: the shipped default.
 * `--watcher-thread true|false` sets EBB_WATCHER_WORKER_THREAD (one reconcile worker in a thread of the watcher's
 * process, given the workers' settings too; its RSS and CPU are the watcher process's, its reconciles are in the
 * watcher's counters as `ebb_reconcile_total{thread="watcher"}`); `--thread-backlog` sets the ScaledObject's
 * `threadBacklog` the pool sends (unset: the shipped ScaledObject's, else the scaler's default `jobsPerWorker`).
 * `--apiserver-prof DIR` starts the apiserver with `--profiling` and takes a CPU profile of it over the first
 * `--apiserver-prof-seconds` of each side's rollout wave (DIR/apiserver-<side>-wave.pprof; `go tool pprof -top`
 * reads it); the profiler's sampling adds CPU of its own.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sleep } from '../src/common/wait.ts';
import { realisticProfile } from '../harness/sandbox/node/timings.ts';
import { manifestNodeOptions } from './lib/manifest-options.ts';
import { describeWorkers, startEbb, workerMode, type EbbProcesses } from './lib/fleet-ebb.ts';
import { fleetAt, setupFleet, waitFleetSettled, type FleetEnv } from './lib/fleet-env.ts';
import { reviver, replacer } from './lib/fleet-json.ts';
import { PodTimeline } from './lib/pod-timeline.ts';
import { window } from './lib/requests.ts';
import { countsDelta, readWatcherCounts } from './lib/watcher-counts.ts';
import { fleetReport, type FleetSaved, type PhaseResult, type SideResult } from './lib/fleet-report.ts';
import { benchImage, createWorkload, deleteWorkloadObjects, setImage, SET_LABEL, type ControllerKind, type Policy, type Workload } from './lib/workloads.ts';
import { cpuMeter, inParallel, memoryOf, rssSampler } from './watcher-lib.ts';
import { profileApiserver } from './lib/apiserver-prof.ts';

const { values: opt } = parseArgs({
  options: {
    apps: { type: 'string', default: '1000' },
    replicas: { type: 'string', default: '3' },
    namespaces: { type: 'string', default: '10' },
    nodes: { type: 'string' },
    'steady-minutes': { type: 'string', default: '10' },
    'sts-steady-minutes': { type: 'string' },
    sides: { type: 'string', default: 'ebb,sts' },
    policy: { type: 'string', default: 'OrderedReady' },
    profile: { type: 'string', default: 'fast' },
    parallel: { type: 'string', default: '32' },
    'limit-minutes': { type: 'string', default: '45' },
    'worker-node-options': { type: 'string' },
    'kcm-qps': { type: 'string', default: '400' },
    'kcm-burst': { type: 'string', default: '800' },
    'kcm-default-limits': { type: 'boolean', default: false },
    workers: { type: 'string', default: 'keda' },
    'scale-down-seconds': { type: 'string', default: '300' },
    dist: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    json: { type: 'string' },
    report: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'apiserver-prof': { type: 'string' },
    'apiserver-prof-seconds': { type: 'string', default: '30' },
    'jobs-per-worker': { type: 'string' },
    'worker-env': { type: 'string', multiple: true, default: [] },
    view: { type: 'string' },
    'watcher-thread': { type: 'string' },
    'thread-backlog': { type: 'string' },
  },
});
const APPS = Number(opt.apps);
const REPLICAS = Number(opt.replicas);
const NAMESPACES = Math.min(Number(opt.namespaces), APPS);
// 80 fleet pods per simulated node (a node takes 110): room for the scheduler to spread them.
const NODES = opt.nodes ? Number(opt.nodes) : Math.max(2, Math.ceil((APPS * REPLICAS) / 80));
const STEADY_MS = Number(opt['steady-minutes']) * 60_000;
/** The StatefulSet side's steady state (the steady-state goal is ebb's; upstream's is for comparison). */
const STS_STEADY_MS = Number(opt['sts-steady-minutes'] ?? opt['steady-minutes']) * 60_000;
const PARALLEL = Number(opt.parallel);
const SIDES = opt.sides.split(',') as ControllerKind[];
const POLICY = opt.policy as Policy;
const GRACE = 5;
/** Quiet time before closing a window, so the controllers' last status writes land inside it. */
const QUIET_MS = 5_000;
/** `--cpu-prof DIR`: V8's CPU profiler in every ebb process, one directory per command. */
const cpuProf = (command: string): string => (opt['cpu-prof'] ? ` --cpu-prof --cpu-prof-dir=${join(opt['cpu-prof'], command)}` : '');
const WATCHER_NODE_OPTIONS = manifestNodeOptions('watcher') + cpuProf('watcher');
/** The worker's NODE_OPTIONS: the manifest's, unless `--worker-node-options` names others (to weigh a change). */
const WORKER_NODE_OPTIONS = (opt['worker-node-options'] ?? manifestNodeOptions('worker')) + cpuProf('worker');
/** kube-controller-manager's client limits; undefined: its defaults (20 QPS, burst 30). */
const KCM_LIMITS = opt['kcm-default-limits'] ? undefined : { qps: Number(opt['kcm-qps']), burst: Number(opt['kcm-burst']) };
const WORKERS = workerMode(
  opt.workers,
  Number(opt['scale-down-seconds']),
  opt['jobs-per-worker'] === undefined ? undefined : Number(opt['jobs-per-worker']),
  1_000,
  opt['thread-backlog'] === undefined ? undefined : Number(opt['thread-backlog']),
);
/** `--worker-env K=V`: worker settings beyond the manifest's (to weigh one, e.g. EBB_WORKER_CONCURRENCY). */
const WORKER_ENV = Object.fromEntries(opt['worker-env'].map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
if (opt.view !== undefined && opt.view !== 'true' && opt.view !== 'false') throw new Error(`--view: true or false, not ${opt.view}`);
/** `--view`: EBB_VIEW for the watcher and the workers alike; empty: the shipped default. */
const VIEW_ENV: Record<string, string> = opt.view === undefined ? {} : { EBB_VIEW: opt.view };
const watcherThread = opt['watcher-thread'];
if (watcherThread !== undefined && watcherThread !== 'true' && watcherThread !== 'false')
  throw new Error(`--watcher-thread: true or false, not ${watcherThread}`);
/** `--watcher-thread`: EBB_WATCHER_WORKER_THREAD, and with it on the workers' settings, for the watcher; empty: the shipped default. */
const THREAD_ENV: Record<string, string> =
  watcherThread === undefined ? {} : { EBB_WATCHER_WORKER_THREAD: watcherThread, ...(watcherThread === 'true' ? WORKER_ENV : {}) };
const DEADLINE = Date.now() + Number(opt['limit-minutes']) * 60_000;

/** The workers' sum in the per-process CPU and RSS records. */
const EBB_WORKERS = 'ebb workers';
// Each spawned worker adds an exit listener (watcher-lib).
process.setMaxListeners(200);

const clock = (): number => performance.timeOrigin + performance.now();
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);
const remaining = (): number => Math.max(1_000, DEADLINE - Date.now());

interface Side {
  kind: ControllerKind;
  workloads: Workload[];
  timeline: PodTimeline;
  pids: Record<string, number>;
  ebb?: EbbProcesses;
}

async function rssOf(pids: Record<string, number>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) out[name] = (await memoryOf(pid).catch(() => ({ rssMiB: Number.NaN }))).rssMiB;
  return out;
}

/** Runs one phase inside a request window, a CPU meter and an RSS sampler. */
async function phase(env: FleetEnv, side: Side, name: string, body: () => Promise<{ ms: number; statusMs?: number }>): Promise<PhaseResult> {
  progress(`${side.kind}: ${name}`);
  const before = await env.snapshot();
  const workers = await side.ebb?.pool.window();
  const counts0 = await readWatcherCounts(side.ebb?.watcherPort);
  const cpu = await cpuMeter(side.pids);
  const rss = rssSampler(side.pids, 1_000);
  const load0 = loadavg()[0] ?? Number.NaN;
  try {
    const timed = await body();
    await sleep(QUIET_MS);
    const w = await workers?.end();
    const result: PhaseResult = {
      phase: name,
      ...timed,
      window: window(before, await env.snapshot()),
      cpu: { ...(await cpu()), ...(w ? { [EBB_WORKERS]: w.cpu } : {}) },
      rssEnd: { ...(await rssOf(side.pids)), ...(w ? { [EBB_WORKERS]: w.rssEnd } : {}) },
      rssMax: { ...rss.max(), ...(w ? { [EBB_WORKERS]: w.rssMax } : {}) },
      load: [load0, loadavg()[0] ?? Number.NaN],
      ...(side.ebb ? { watcher: countsDelta(counts0, await readWatcherCounts(side.ebb.watcherPort)) } : {}),
      ...(w ? { reconciles: w.reconciles, workers: { max: w.maxWorkers, end: w.endWorkers, started: w.started, stopped: w.stopped } } : {}),
    };
    progress(`${side.kind}: ${name} took ${(result.ms / 1000).toFixed(1)} s`);
    return result;
  } finally {
    rss.stop();
  }
}

async function runSide(env: FleetEnv, side: Side, out: SideResult): Promise<void> {
  const total = side.workloads.length * REPLICAS;
  const v1 = benchImage('v1');
  const t = (image: string): { image: string; graceSeconds: number; claims: boolean } => ({ image, graceSeconds: GRACE, claims: false });
  out.phases.push(
    await phase(env, side, 'create → Ready', async () => {
      const t0 = clock();
      await inParallel(side.workloads, PARALLEL, (w) => createWorkload(env.rest, w, t(v1)));
      const ready = await side.timeline.until(fleetAt(total, v1), remaining(), `${side.kind}: all ${total} pods Ready`);
      await waitFleetSettled(env, side.kind, side.workloads[0], REPLICAS, remaining());
      return { ms: ready - t0, statusMs: clock() - t0 };
    }),
  );
  out.phases.push(
    await phase(env, side, 'steady state', async () => {
      const t0 = clock();
      await sleep(Math.min(side.kind === 'sts' ? STS_STEADY_MS : STEADY_MS, remaining()));
      return { ms: clock() - t0 };
    }),
  );
  const v2 = benchImage(`v2-${randomBytes(3).toString('hex')}`);
  const profiled = opt['apiserver-prof']
    ? profileApiserver(env.sb.kubeconfig, Number(opt['apiserver-prof-seconds']), join(opt['apiserver-prof'], `apiserver-${side.kind}-wave.pprof`))
    : undefined;
  out.phases.push(
    await phase(env, side, 'rollout wave', async () => {
      const t0 = clock();
      await inParallel(side.workloads, PARALLEL, (w) => setImage(env.rest, w, t(v2)));
      const done = await side.timeline.until(fleetAt(total, v2), remaining(), `${side.kind}: all ${total} pods at the new image`);
      await waitFleetSettled(env, side.kind, side.workloads[0], REPLICAS, remaining());
      return { ms: done - t0, statusMs: clock() - t0 };
    }),
  );
  if (profiled) progress(`${side.kind}: apiserver profile of the wave: ${await profiled}`);
  out.phases.push(
    await phase(env, side, 'delete all', async () => {
      const t0 = clock();
      await inParallel(side.workloads, PARALLEL, (w) => deleteWorkloadObjects(env.rest, w));
      const gone = await side.timeline.until((pods) => pods.length === 0, remaining(), `${side.kind}: all pods gone`);
      return { ms: gone - t0 };
    }),
  );
}

function startEbbSide(env: FleetEnv): Promise<EbbProcesses> {
  return startEbb({
    sb: env.sb,
    namespaces: env.namespaces,
    workers: WORKERS,
    watcherNodeOptions: WATCHER_NODE_OPTIONS,
    workerNodeOptions: WORKER_NODE_OPTIONS,
    workerEnv: { ...VIEW_ENV, ...WORKER_ENV },
    watcherEnv: { ...VIEW_ENV, ...THREAD_ENV },
    dist: opt.dist,
    progress,
  });
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-fleet-'));
  const loadStart = loadavg();
  progress(
    `sandbox in ${dir}; ${APPS} workloads × ${REPLICAS}, ${NAMESPACES} namespaces, ${NODES} nodes; load ${loadStart.map((n) => n.toFixed(2)).join(' ')}`,
  );
  const env = await setupFleet({
    dir,
    nodes: NODES,
    namespaces: NAMESPACES,
    timings: opt.profile === 'realistic' ? realisticProfile : undefined,
    kcmLimits: KCM_LIMITS,
    apiserverProfiling: opt['apiserver-prof'] !== undefined,
  });
  const saved: FleetSaved = {
    meta: {
      apps: APPS,
      replicas: REPLICAS,
      namespaces: NAMESPACES,
      nodes: NODES,
      policy: POLICY,
      profile: opt.profile,
      steadyMinutes: STEADY_MS / 60_000,
      stsSteadyMinutes: STS_STEADY_MS / 60_000,
      started: new Date().toISOString(),
      load: { start: loadStart, end: [] },
      kcmLimits: KCM_LIMITS ?? 'default',
      workers:
        describeWorkers(WORKERS) +
        (opt.view === undefined ? '' : `; EBB_VIEW=${opt.view} (watcher and workers)`) +
        (watcherThread === undefined ? '' : `; EBB_WATCHER_WORKER_THREAD=${watcherThread}`) +
        Object.entries(WORKER_ENV)
          .map(([k, v]) => `; workers with ${k}=${v}`)
          .join(''),
    },
    sides: [],
  };
  let finished = false;
  const finish = (why: string): void => {
    if (finished) return;
    finished = true;
    saved.meta.finished = new Date().toISOString();
    saved.meta.load.end = loadavg();
    if (why) saved.meta.incomplete = why;
    process.stdout.write(fleetReport(saved));
  };
  const limit = setTimeout(() => {
    finish(`stopped by --limit-minutes ${opt['limit-minutes']}`);
    if (opt.json) void writeFile(opt.json, JSON.stringify(saved, replacer, 1));
    void env.sb.stop().finally(() => process.exit(3));
  }, DEADLINE - Date.now());
  try {
    for (const kind of SIDES) {
      const workloads = Array.from({ length: APPS }, (_, i): Workload => ({
        kind,
        policy: POLICY,
        namespace: env.namespaces[i % NAMESPACES] ?? 'default',
        name: `${kind}-${i}`,
        replicas: REPLICAS,
      }));
      const timeline = new PodTimeline(env.rest, '', SET_LABEL);
      await timeline.start();
      const ebb = kind === 'ebb' ? await startEbbSide(env) : undefined;
      const pids = { ...env.pids, ...(ebb ? { 'ebb watcher': ebb.watcher.pid } : {}) };
      const side: Side = { kind, workloads, timeline, pids, ...(ebb ? { ebb } : {}) };
      const result: SideResult = { kind, phases: [] };
      saved.sides.push(result);
      try {
        if (ebb) await sleep(QUIET_MS); // the watcher's initial lists land before the first window
        await runSide(env, side, result);
      } finally {
        await timeline.stop();
        await ebb?.pool.close();
        await ebb?.watcher.stop();
      }
    }
    clearTimeout(limit);
    finish('');
    if (opt.json) await writeFile(opt.json, JSON.stringify(saved, replacer, 1));
  } finally {
    clearTimeout(limit);
    await env.sb.stop();
    if (!opt.keep) await rm(dir, { recursive: true, force: true });
  }
}

if (opt.report) {
  const parsed: unknown = JSON.parse(await readFile(opt.report, 'utf8'), reviver);
  process.stdout.write(fleetReport(parsed as FleetSaved));
} else await main();
