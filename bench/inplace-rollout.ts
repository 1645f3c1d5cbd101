/**
 * In-place rollout benchmark: a rolling image update of N replicas (maxUnavailable 1, OrderedReady)
 * by (1) ebb in place (podUpdatePolicy InPlaceIfPossible), (2) ebb recreate (ReCreate), (3) the upstream
 * StatefulSet controller, on one sandbox with the realistic simulated kubelet.
 *
 *   node bench/inplace-rollout.ts [--replicas 20] [--runs 2] [--nodes 4] [--grace 5] [--configs inplace,recreate,sts] [--json out.json]
 *
 * The three workloads are created at once (setup is not measured), then each run rolls each one in turn to a
 * fresh image tag (uncached on every node), the order rotated by one config per run. Requests are attributed as in app-rollout.ts (lib/attribution.ts):
 * apiserver_request_total minus the simulated kubelets' and the benchmark's own requests, split by resource.
 * Rollout time: template change → the pod watch event after which all pods run the new image (the spec, and the
 * container reported running it ready: an in-place pod shows the new spec with its Ready from before the patch),
 * are Ready and none is terminating. For in place, a second watch records per pod when the gate went False, the spec got
 * the new image, the container ran the new image and was ready, the gate went True and the pod turned Ready.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { API_VERSION, APP_KIND, appRef } from '../src/api/group.ts';
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
import { benchEbbEnv } from './lib/ebb-env.ts';
import { attribute, isWrite, type Attributed } from './lib/attribution.ts';
import { readEbbWorker } from './lib/ebb-metrics.ts';
import { allAt, allRunningAt, PodTimeline } from './lib/pod-timeline.ts';
import { countRequests, readApiserverRequests, sum, window, type Counts, type RequestSnapshot } from './lib/requests.ts';
import { median, medianSpread, table } from './lib/report.ts';
import { benchImage, createWorkload, podTemplate, selectorOf, setImage, waitStatusSettled, SET_LABEL, type Workload } from './lib/workloads.ts';
import { StepRecorder, type PodSteps } from './inplace/steps.ts';

const { values: opt } = parseArgs({
  options: {
    replicas: { type: 'string', default: '20' },
    runs: { type: 'string', default: '2' },
    nodes: { type: 'string', default: '4' },
    grace: { type: 'string', default: '5' },
    configs: { type: 'string', default: 'inplace,recreate,sts' },
    json: { type: 'string' },
  },
});
const REPLICAS = Number(opt.replicas);
const RUNS = Number(opt.runs);
const GRACE = Number(opt.grace);
const QUIET_MS = 3_000;
/** What the simulated kubelet charges to stop a container: the pod's grace period capped by the profile, and its own stop. */
const STOP_MS = Math.min(GRACE * 1000, realisticProfile.terminationGraceCapMs) + realisticProfile.stopMs;
type Config = 'inplace' | 'recreate' | 'sts';
const CONFIGS = opt.configs.split(',') as Config[];
const LABEL: Record<Config, string> = { inplace: 'ebb in place', recreate: 'ebb recreate', sts: 'upstream StatefulSet' };

const clock = (): number => performance.timeOrigin + performance.now();
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);
const load = (): string =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

interface Env {
  sb: Sandbox;
  rest: KubeRest;
  ns: string;
  watcher: RunningWatcher;
  worker: RunningWorker;
  snapshot(): Promise<RequestSnapshot>;
}

interface Target {
  config: Config;
  w: Workload;
  timeline: PodTimeline;
  steps?: StepRecorder;
}

interface Gaps {
  /** previous pod Ready (or template change) → gate False. */
  toStart: number[];
  /** gate False → new image in the spec. */
  startToPatch: number[];
  /** new image in the spec → container running the new image and ready (kubelet). */
  kubelet: number[];
  /** container ready → gate True. */
  toFinish: number[];
  /** gate True → pod Ready (kubelet recomputes Ready). */
  finishToReady: number[];
}

interface Measured {
  run: number;
  config: Config;
  ms: number;
  statusLagMs: number;
  writes: Counts;
  attributed: Attributed;
  kubeletPerPod: number;
  conflicts: number;
  load: [number, number];
  ebbReconciles?: number;
  /** In place only. */
  floorMs?: number;
  pulls?: number;
  gaps?: Gaps;
  recreated?: number;
  restartCounts?: number[];
  /** Pods seen Ready on the new spec while the gate was False. */
  staleReady?: number;
  /** Pods whose gate was held False again after its early release (InPlaceGateHeld). */
  gateHeld?: number;
}

function appSpec(w: Workload, image: string, policy: 'InPlaceIfPossible' | 'ReCreate'): Record<string, unknown> {
  return {
    replicas: w.replicas,
    selector: { matchLabels: { [SET_LABEL]: w.name } },
    serviceName: w.name,
    podManagementPolicy: 'OrderedReady',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 1, podUpdatePolicy: policy } },
    template: podTemplate(w, { image, graceSeconds: GRACE }),
    volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
  };
}

async function create(env: Env, t: Target, image: string): Promise<void> {
  if (t.config === 'sts') return createWorkload(env.rest, t.w, { image, graceSeconds: GRACE });
  const w = t.w;
  await env.rest.create(core('services', w.namespace), {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: w.name, namespace: w.namespace },
    spec: { clusterIP: 'None', selector: { [SET_LABEL]: w.name }, ports: [{ name: 'http', port: 8080 }] },
  });
  await env.rest.create(
    { ...appRef(w.namespace, w.name), name: undefined },
    {
      apiVersion: API_VERSION,
      kind: APP_KIND,
      metadata: { name: w.name, namespace: w.namespace },
      spec: appSpec(w, image, t.config === 'inplace' ? 'InPlaceIfPossible' : 'ReCreate'),
    },
  );
}

const ordinal = (name: string): number => Number(name.slice(name.lastIndexOf('-') + 1));

function inPlaceAnalysis(
  steps: PodSteps[],
  t0: number,
  before: Map<string, string>,
): Pick<Measured, 'floorMs' | 'pulls' | 'gaps' | 'recreated' | 'restartCounts' | 'staleReady' | 'gateHeld'> {
  const sorted = [...steps].filter((s) => Number.isInteger(ordinal(s.name))).sort((a, b) => ordinal(b.name) - ordinal(a.name));
  const p = realisticProfile;
  const seenNodes = new Set<string>();
  let floorMs = 0;
  let pulls = 0;
  const gaps: Gaps = { toStart: [], startToPatch: [], kubelet: [], toFinish: [], finishToReady: [] };
  let prevReady = t0;
  for (const s of sorted) {
    // The sim on an in-place image change: stop (the grace period, capped by the profile), pull if the node lacks the image, start, readiness.
    const pull = s.node !== undefined && !seenNodes.has(s.node);
    if (s.node !== undefined) seenNodes.add(s.node);
    if (pull) pulls++;
    floorMs += STOP_MS + (pull ? p.pullMs : 0) + p.startMs + p.readyMs;
    const gap = (list: number[], from: number | undefined, to: number | undefined): void => {
      if (from !== undefined && to !== undefined) list.push(to - from);
    };
    gap(gaps.toStart, prevReady, s.gateFalse);
    gap(gaps.startToPatch, s.gateFalse, s.specImage);
    gap(gaps.kubelet, s.specImage, s.containerReady);
    gap(gaps.toFinish, s.containerReady, s.gateTrue);
    gap(gaps.finishToReady, s.gateTrue, s.ready);
    if (s.ready !== undefined) prevReady = s.ready;
  }
  const recreated = sorted.filter((s) => before.get(s.name) !== undefined && before.get(s.name) !== s.uid).length;
  return {
    floorMs,
    pulls,
    gaps,
    recreated,
    restartCounts: sorted.map((s) => s.restartCount ?? -1),
    staleReady: sorted.filter((s) => s.readyWhileGateFalse !== undefined).length,
    gateHeld: sorted.filter((s) => s.gateHeld !== undefined).length,
  };
}

async function rollout(env: Env, t: Target, run: number): Promise<Measured> {
  const image = benchImage(`v${run + 1}-${t.config}-${randomBytes(3).toString('hex')}`);
  const before = new Map(t.timeline.current().map((p) => [p.metadata.name, p.metadata.uid]));
  const snap0 = await env.snapshot();
  const r0 = t.config !== 'sts' ? (await readEbbWorker(env.worker.httpPort)).reconciles : 0;
  const load0 = loadavg()[0]!;
  const t0 = clock();
  t.steps?.begin(image, t0, before);
  await setImage(env.rest, t.w, { image, graceSeconds: GRACE });
  const done = await t.timeline.until(allRunningAt(t.w.name, t.w.replicas, image), 900_000, `${t.w.name}: all pods at ${image} and Ready`);
  const load1 = loadavg()[0]!;
  await waitStatusSettled(env.rest, t.w, 120_000);
  const statusLagMs = clock() - done;
  await sleep(QUIET_MS);
  const win = window(snap0, await env.snapshot());
  const steps = t.steps?.end();
  const attributed = attribute(win.residual, t.config === 'sts' ? 'sts' : 'ebb');
  const writes: Counts = new Map([...attributed.controller].filter(([k]) => isWrite(k)));
  const m: Measured = {
    run,
    config: t.config,
    ms: done - t0,
    statusLagMs,
    writes,
    attributed,
    kubeletPerPod: sum(win.kubelet) / REPLICAS,
    conflicts: sum(win.conflicts),
    load: [load0, load1],
    ...(t.config !== 'sts' ? { ebbReconciles: (await readEbbWorker(env.worker.httpPort)).reconciles - r0 } : {}),
    ...(steps ? inPlaceAnalysis(steps, t0, before) : {}),
  };
  return m;
}

async function setup(dir: string): Promise<Env> {
  const log = createLogger('bench', 'warn');
  const sb = await startSandbox({ dir, nodes: Number(opt.nodes), log, timings: realisticProfile, extraControllers: ['statefulset-controller'] });
  const kubelet = countRequests(sb.rest);
  const rest = new KubeRest(loadKubeConfig(sb.kubeconfig));
  const bench = countRequests(rest);
  const ns = `bench-${randomBytes(3).toString('hex')}`;
  await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await waitFor(() => rest.get(core('serviceaccounts', ns, 'default')), { timeoutMs: 60_000, what: 'default ServiceAccount' });
  const cfg = benchEbbEnv(sb, [ns]);
  const watcher = await startWatcher(parseWatcherConfig(cfg), log);
  const worker = await startWorker(parseWorkerConfig(cfg), log, reconcilers());
  const snapshot = async (): Promise<RequestSnapshot> => {
    const { total, conflicts } = await readApiserverRequests(rest);
    return { apiserver: total, conflicts, kubelet: kubelet.snapshot(), bench: bench.snapshot() };
  };
  return { sb, rest, ns, watcher, worker, snapshot };
}

const s1 = (ms: number): string => (ms / 1000).toFixed(1);
const fmtCounts = (c: Counts): string =>
  [...c]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${(v / REPLICAS).toFixed(2)}`)
    .join(', ');

function report(all: Measured[]): string {
  const by = (c: Config): Measured[] => all.filter((m) => m.config === c);
  const upstream = median(by('sts').map((m) => m.ms));
  const rows = CONFIGS.map((c) => {
    const ms = by(c);
    const times = ms.map((m) => m.ms);
    const writes = ms.map((m) => sum(m.writes) / REPLICAS);
    const floor =
      c === 'inplace'
        ? medianSpread(
            ms.map((m) => m.ms / m.floorMs!),
            (n) => n.toFixed(2),
          )
        : '–';
    return [
      LABEL[c],
      medianSpread(times, s1),
      Number.isFinite(upstream) ? (median(times) / upstream).toFixed(2) : '–',
      floor,
      medianSpread(writes, (n) => n.toFixed(2)),
      medianSpread(
        ms.map((m) => m.kubeletPerPod),
        (n) => n.toFixed(1),
      ),
      medianSpread(
        ms.map((m) => m.statusLagMs),
        s1,
      ),
    ];
  });
  const lines = [
    `## ${REPLICAS} replicas, rolling image update, maxUnavailable 1, OrderedReady, ${RUNS} runs (median (min–max))`,
    '',
    table(['config', 'rollout s', '÷ upstream', '÷ in-place floor', 'controller writes / pod', 'kubelet requests / pod', 'status lag s'], rows),
    '',
  ];
  const ip = by('inplace');
  if (ip.length > 0) {
    const g = (f: (x: Gaps) => number[]): string =>
      medianSpread(
        ip.map((m) => f(m.gaps!).reduce((a, b) => a + b, 0)),
        s1,
      );
    const perPod = (f: (x: Gaps) => number[]): string =>
      medianSpread(
        ip.flatMap((m) => f(m.gaps!)),
        (n) => n.toFixed(0),
      );
    lines.push(
      `### In place: floor and per-pod steps`,
      '',
      `Floor per run = Σ pods (stop ${STOP_MS / 1000} s (grace ${GRACE} s capped by the profile, and the kubelet's own stop) + start ${realisticProfile.startMs / 1000} s + ready ${realisticProfile.readyMs / 1000} s) + pulls × ${realisticProfile.pullMs / 1000} s (the first pod per node pulls; later ones find the image cached): ${ip.map((m) => `${s1(m.floorMs!)} s (${m.pulls} pulls)`).join(', ')}; all-uncached floor ${s1(REPLICAS * (STOP_MS + realisticProfile.pullMs + realisticProfile.startMs + realisticProfile.readyMs))} s. The readiness gate's Ready recomputation (${realisticProfile.readinessGateMs / 1000} s per pod in the profile) is not in the floor.`,
      '',
      table(
        ['segment', 'Σ per run, s', 'per pod, ms (all pods, all runs)'],
        [
          ['prev pod Ready (or template change) → gate False (ebb: notice, start write)', g((x) => x.toStart), perPod((x) => x.toStart)],
          ['gate False → new image in spec (ebb: 2nd reconcile, image patch)', g((x) => x.startToPatch), perPod((x) => x.startToPatch)],
          ['new image in spec → container ready (kubelet: stop, pull, start, probe)', g((x) => x.kubelet), perPod((x) => x.kubelet)],
          ['container ready → gate True (ebb: 3rd reconcile, finish write)', g((x) => x.toFinish), perPod((x) => x.toFinish)],
          ['gate True → pod Ready (kubelet recomputes Ready)', g((x) => x.finishToReady), perPod((x) => x.finishToReady)],
        ],
      ),
      '',
    );
  }
  for (const m of all) {
    const extra =
      m.config === 'inplace'
        ? `; recreated pods ${m.recreated}; restartCounts ${[...new Set(m.restartCounts)].join('/')}; pods Ready on the new spec while the gate was False ${m.staleReady}; gates held False again ${m.gateHeld}`
        : '';
    const rec = m.ebbReconciles !== undefined ? `; ebb reconciles ${m.ebbReconciles}` : '';
    lines.push(
      `- run ${m.run} ${LABEL[m.config]}: ${s1(m.ms)} s; load ${m.load.map((n) => n.toFixed(2)).join('→')}; writes/pod: ${fmtCounts(m.writes)}${rec}; 409s ${m.conflicts}${extra}`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-inplace-'));
  progress(`sandbox in ${dir}; ${REPLICAS} replicas, ${RUNS} runs; load ${load()}`);
  const env = await setup(dir);
  const targets: Target[] = [];
  const all: Measured[] = [];
  try {
    for (const config of CONFIGS) {
      const w: Workload = {
        kind: config === 'sts' ? 'sts' : 'ebb',
        policy: 'OrderedReady',
        namespace: env.ns,
        name: config === 'inplace' ? 'ip' : config === 'recreate' ? 'rc' : 'sts',
        replicas: REPLICAS,
      };
      const timeline = new PodTimeline(env.rest, env.ns, selectorOf(w));
      await timeline.start();
      const t: Target = { config, w, timeline };
      if (config === 'inplace') {
        t.steps = new StepRecorder(env.rest, env.ns, selectorOf(w));
        await t.steps.start();
      }
      targets.push(t);
    }
    const v1 = benchImage('v1');
    await Promise.all(targets.map((t) => create(env, t, v1)));
    await Promise.all(targets.map((t) => t.timeline.until(allAt(t.w.name, REPLICAS, v1), 900_000, `${t.w.name} Ready`)));
    await Promise.all(targets.map((t) => waitStatusSettled(env.rest, t.w, 120_000)));
    await sleep(QUIET_MS);
    progress(`all workloads Ready; load ${load()}`);
    for (let run = 1; run <= RUNS; run++) {
      // Each run starts with the next config: no side always runs first (or right after the same other).
      for (const t of targets.map((_, i) => targets[(i + run - 1) % targets.length]!)) {
        const m = await rollout(env, t, run);
        all.push(m);
        progress(
          `run ${run} ${LABEL[t.config]}: ${s1(m.ms)} s, ${(sum(m.writes) / REPLICAS).toFixed(2)} writes/pod${m.floorMs ? `, floor ${s1(m.floorMs)} s` : ''}; load ${load()}`,
        );
      }
    }
    process.stdout.write(`${report(all)}\n`);
    if (opt.json)
      await writeFile(
        opt.json,
        JSON.stringify(all, (_k, v: unknown): unknown => (v instanceof Map ? Object.fromEntries(v as Counts) : v), 2),
      );
  } finally {
    for (const t of targets) {
      await t.timeline.stop();
      await t.steps?.stop();
    }
    await env.worker.stop();
    await env.watcher.stop();
    await env.sb.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
