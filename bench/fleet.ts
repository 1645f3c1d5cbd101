/**
 * Fleet benchmark (issue 13): N Apps × 3 replicas spread over namespaces and simulated nodes, then the same
 * fleet as StatefulSets run by kube-controller-manager's statefulset controller, one after the other on one
 * sandbox. Phases per side: create all → every pod Ready; a steady state with nothing changing; a rollout
 * wave (every workload gets a new image at once); delete all → every pod gone.
 *
 *   node bench/fleet.ts [--apps 1000] [--replicas 3] [--namespaces 10] [--nodes <auto>] [--steady-minutes 10]
 *                       [--sts-steady-minutes <steady-minutes>]
 *                       [--sides ebb,sts] [--policy OrderedReady] [--profile fast|realistic] [--parallel 32]
 *                       [--limit-minutes 45] [--dist] [--keep] [--json out.json] [--report out.json]
 *                       [--worker-node-options='<NODE_OPTIONS>']
 *
 * ebb runs as the manifest runs it: one `ebb watcher` and one `ebb worker`, each with its manifest's NODE_OPTIONS,
 * each its own process, so CPU and RSS are theirs alone. Requests are `apiserver_request_total` deltas minus
 * the simulated kubelets' and the benchmark's own client-side counts (lib/requests.ts), split by
 * lib/attribution.ts. Per phase: wall time, requests by key, CPU-seconds per process (/proc), RSS (end of the
 * phase and the maximum sampled every second). `--limit-minutes` is a hard wall limit: when it passes, the
 * phases measured so far are printed and the benchmark stops.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sleep, waitFor } from '../src/common/wait.ts';
import { createLogger } from '../src/common/log.ts';
import { KubeRest, loadKubeConfig } from '../src/kube/rest.ts';
import { startSandbox, type Sandbox } from '../harness/sandbox/sandbox.ts';
import { realisticProfile } from '../harness/sandbox/node/timings.ts';
import { benchEbbEnv } from './lib/ebb-env.ts';
import { manifestNodeOptions } from './lib/manifest-options.ts';
import { readEbbWorker } from './lib/ebb-metrics.ts';
import { imageOf, isReady, PodTimeline, type BenchPod } from './lib/pod-timeline.ts';
import { countRequests, readApiserverRequests, window, type RequestSnapshot } from './lib/requests.ts';
import { fleetReport, type FleetSaved, type PhaseResult, type SideResult } from './lib/fleet-report.ts';
import {
  benchImage,
  createWorkload,
  deleteWorkloadObjects,
  setImage,
  SET_LABEL,
  statusSettled,
  workloadRef,
  type ControllerKind,
  type Policy,
  type Workload,
  type WorkloadObject,
} from './lib/workloads.ts';
import { cpuMeter, createNamespace, inParallel, memoryOf, rssSampler, spawnEbb, type BenchProcess } from './watcher-lib.ts';

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
    dist: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    json: { type: 'string' },
    report: { type: 'string' },
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
const WATCHER_NODE_OPTIONS = manifestNodeOptions('watcher');
/** The worker's NODE_OPTIONS: the manifest's, unless `--worker-node-options` names others (to weigh a change). */
const WORKER_NODE_OPTIONS = opt['worker-node-options'] ?? manifestNodeOptions('worker');
/** kube-controller-manager's garbage collector rediscovers API resources every 30 s. */
const GC_DISCOVERY_MS = 40_000;
const DEADLINE = Date.now() + Number(opt['limit-minutes']) * 60_000;

const clock = (): number => performance.timeOrigin + performance.now();
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);
const remaining = (): number => Math.max(1_000, DEADLINE - Date.now());

interface Env {
  sb: Sandbox;
  rest: KubeRest;
  namespaces: string[];
  snapshot(): Promise<RequestSnapshot>;
  /** Control plane and Redis process ids by name. */
  pids: Record<string, number>;
}

interface Side {
  kind: ControllerKind;
  workloads: Workload[];
  timeline: PodTimeline;
  pids: Record<string, number>;
  watcher?: BenchProcess;
  worker?: { proc: BenchProcess; port: number };
}

/** Every fleet pod is at `image`, Ready and not terminating (`total` of them; none left over). */
function fleetAt(total: number, image: string): (pods: BenchPod[]) => boolean {
  return (pods) => pods.length === total && pods.every((p) => imageOf(p) === image && isReady(p) && !p.metadata.deletionTimestamp);
}

/** Polls every workload's status, one LIST per namespace, until all say they are done. */
async function waitFleetSettled(env: Env, side: Side): Promise<void> {
  const sample = side.workloads[0];
  if (!sample) return;
  await waitFor(
    async () => {
      for (const ns of env.namespaces) {
        const { items } = await env.rest.list<WorkloadObject>({ ...workloadRef({ ...sample, namespace: ns }), name: undefined });
        if (!items.every((o) => statusSettled(o, REPLICAS))) return undefined;
      }
      return true;
    },
    { timeoutMs: remaining(), intervalMs: 2_000, what: `${side.kind} fleet status settled` },
  );
}

async function reconciles(side: Side): Promise<number | undefined> {
  return side.worker ? (await readEbbWorker(side.worker.port)).reconciles : undefined;
}

async function rssOf(pids: Record<string, number>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) out[name] = (await memoryOf(pid).catch(() => ({ rssMiB: Number.NaN }))).rssMiB;
  return out;
}

/** Runs one phase inside a request window, a CPU meter and an RSS sampler. */
async function phase(env: Env, side: Side, name: string, body: () => Promise<{ ms: number; statusMs?: number }>): Promise<PhaseResult> {
  progress(`${side.kind}: ${name}`);
  const before = await env.snapshot();
  const r0 = await reconciles(side);
  const cpu = await cpuMeter(side.pids);
  const rss = rssSampler(side.pids, 1_000);
  const load0 = loadavg()[0] ?? Number.NaN;
  try {
    const timed = await body();
    await sleep(QUIET_MS);
    const r1 = await reconciles(side);
    const result: PhaseResult = {
      phase: name,
      ...timed,
      window: window(before, await env.snapshot()),
      cpu: await cpu(),
      rssEnd: await rssOf(side.pids),
      rssMax: rss.max(),
      load: [load0, loadavg()[0] ?? Number.NaN],
      ...(r0 !== undefined && r1 !== undefined ? { reconciles: r1 - r0 } : {}),
    };
    progress(`${side.kind}: ${name} took ${(result.ms / 1000).toFixed(1)} s`);
    return result;
  } finally {
    rss.stop();
  }
}

async function runSide(env: Env, side: Side, out: SideResult): Promise<void> {
  const total = side.workloads.length * REPLICAS;
  const v1 = benchImage('v1');
  const t = (image: string): { image: string; graceSeconds: number; claims: boolean } => ({ image, graceSeconds: GRACE, claims: false });
  out.phases.push(
    await phase(env, side, 'create → Ready', async () => {
      const t0 = clock();
      await inParallel(side.workloads, PARALLEL, (w) => createWorkload(env.rest, w, t(v1)));
      const ready = await side.timeline.until(fleetAt(total, v1), remaining(), `${side.kind}: all ${total} pods Ready`);
      await waitFleetSettled(env, side);
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
  out.phases.push(
    await phase(env, side, 'rollout wave', async () => {
      const t0 = clock();
      await inParallel(side.workloads, PARALLEL, (w) => setImage(env.rest, w, t(v2)));
      const done = await side.timeline.until(fleetAt(total, v2), remaining(), `${side.kind}: all ${total} pods at the new image`);
      await waitFleetSettled(env, side);
      return { ms: done - t0, statusMs: clock() - t0 };
    }),
  );
  out.phases.push(
    await phase(env, side, 'delete all', async () => {
      const t0 = clock();
      await inParallel(side.workloads, PARALLEL, (w) => deleteWorkloadObjects(env.rest, w));
      const gone = await side.timeline.until((pods) => pods.length === 0, remaining(), `${side.kind}: all pods gone`);
      return { ms: gone - t0 };
    }),
  );
}

async function startEbb(env: Env): Promise<Pick<Side, 'watcher' | 'worker'>> {
  // Info level: the processes announce their ops port in the `... started` line (the rest is dropped unparsed).
  const base = { ...benchEbbEnv(env.sb, env.namespaces), EBB_LOG_LEVEL: 'info' };
  const opts = { dist: opt.dist };
  const watcher = spawnEbb('watcher', { ...base, NODE_OPTIONS: WATCHER_NODE_OPTIONS }, () => false, opts);
  const proc = spawnEbb('worker', { ...base, NODE_OPTIONS: WORKER_NODE_OPTIONS }, () => false, opts);
  await watcher.waitForLog((l) => l.msg === 'watcher started', 60_000, 'watcher started');
  const started = await proc.waitForLog((l) => l.msg === 'worker started', 60_000, 'worker started');
  return { watcher, worker: { proc, port: Number(started['port']) } };
}

async function setup(dir: string): Promise<Env> {
  const log = createLogger('bench', 'warn');
  const timings = opt.profile === 'realistic' ? realisticProfile : undefined;
  const t0 = Date.now();
  const sb = await startSandbox({ dir, nodes: NODES, log, timings, extraControllers: ['statefulset-controller'] });
  const kubelet = countRequests(sb.rest);
  const rest = new KubeRest(loadKubeConfig(sb.kubeconfig));
  const bench = countRequests(rest);
  const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `fleet-${i}`);
  await inParallel(namespaces, 8, (ns) => createNamespace(rest, ns));
  // kube-controller-manager starts before the CRDs exist; its garbage collector rediscovers resources every
  // 30 s. Until it has, it GETs every App a pod names as owner, with backoff, which would be counted as ebb's.
  await sleep(Math.max(0, GC_DISCOVERY_MS - (Date.now() - t0)));
  const pids: Record<string, number> = { ...Object.fromEntries(sb.controlPlane.children.map((c) => [c.name, c.pid])), redis: sb.redisPid };
  const snapshot = async (): Promise<RequestSnapshot> => {
    const { total, conflicts } = await readApiserverRequests(rest);
    return { apiserver: total, conflicts, kubelet: kubelet.snapshot(), bench: bench.snapshot() };
  };
  return { sb, rest, namespaces, snapshot, pids };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-fleet-'));
  const loadStart = loadavg();
  progress(
    `sandbox in ${dir}; ${APPS} workloads × ${REPLICAS}, ${NAMESPACES} namespaces, ${NODES} nodes; load ${loadStart.map((n) => n.toFixed(2)).join(' ')}`,
  );
  const env = await setup(dir);
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
      const ebb = kind === 'ebb' ? await startEbb(env) : {};
      const pids = { ...env.pids, ...(ebb.watcher && ebb.worker ? { 'ebb watcher': ebb.watcher.pid, 'ebb worker': ebb.worker.proc.pid } : {}) };
      const side: Side = { kind, workloads, timeline, pids, ...ebb };
      const result: SideResult = { kind, phases: [] };
      saved.sides.push(result);
      try {
        if (ebb.watcher) await sleep(QUIET_MS); // the watcher's initial lists land before the first window
        await runSide(env, side, result);
      } finally {
        await timeline.stop();
        await ebb.watcher?.stop();
        await ebb.worker?.proc.stop();
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

/** Maps (request counts) as plain objects in the JSON file. */
function replacer(_key: string, value: unknown): unknown {
  return value instanceof Map ? { $map: Object.fromEntries(value as Map<string, number>) } : value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && '$map' in value) return new Map(Object.entries((value as { $map: Record<string, number> }).$map));
  return value;
}

if (opt.report) {
  const parsed: unknown = JSON.parse(await readFile(opt.report, 'utf8'), reviver);
  process.stdout.write(fleetReport(parsed as FleetSaved));
} else await main();
