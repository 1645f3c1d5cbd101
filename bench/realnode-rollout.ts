/**
 * Rollouts on the real node: a rolling image update of N replicas pinned to the sandbox's real node
 * (kubelet, containerd, runc), by ebb in place (InPlaceIfPossible), ebb recreate (ReCreate) and the upstream
 * StatefulSet controller (kube-controller-manager), all in one sandbox and one run, plus the real kubelet's
 * per-pod floor measured directly on a bare pod (realnode-floor.ts).
 *
 *   node bench/realnode-rollout.ts [--replicas 10] [--runs 3] [--grace 1] [--floor-samples 3] [--configs inplace,recreate,sts]
 *                                  [--workload app|slow] [--start-seconds 5] [--json out.json]
 *
 * `--workload slow`: each pod mounts a volume (a claim from the template; the sandbox provisioner's PV on the
 * real node) and takes `--start-seconds` to start (a regular init container that sleeps: it runs when a pod
 * is created, not when a container is restarted in place, as a slow start such as a data load or a warm-up
 * before the app's container). The floor pods stay the sample app's.
 *
 * Needs root and the real-node packages (see bench/README.md). The three workloads are created at once on
 * `$EBB_SANDBOX_REGISTRY/ebb/app:v1` (setup, not measured); each run rolls every workload in turn (the order
 * rotates per run) to the other of v1/v2 (both already on the node: no pull), after taking the floor samples.
 * Rollout time: template change → the pod watch event after which all pods run the new image, are Ready and
 * none is terminating; the status lag (→ the controller's status settled) is reported apart. ebb's writes per
 * pod updated: the writes ebb's watcher and worker (in this process) send, counted client-side from the
 * template change to the end of the quiet period after the status settled, divided by the replicas (the real
 * kubelets' own requests, which the apiserver's counts would mix in, are not ebb's).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sleep } from '../src/common/wait.ts';
import { abortable, freshNamespace, interruptSignal, runToExit, startRealEnv, type RealEnv } from './lib/realnode-env.ts';
import { FloorPod, emptySamples, type FloorSamples } from './lib/realnode-floor.ts';
import { APP_SHAPE, CONFIG_LABEL, createRealWorkload, realWorkload, setRealImage, type RealConfig, type RealShape } from './lib/realnode-workloads.ts';
import { allAt, PodTimeline } from './lib/pod-timeline.ts';
import { median, medianSpread, table } from './lib/report.ts';
import { selectorOf, waitStatusSettled, type Workload } from './lib/workloads.ts';
import { StepRecorder, type PodSteps } from './inplace/steps.ts';
import { isWrite } from './lib/attribution.ts';
import { EbbTrace } from './lib/ebb-trace.ts';
import { countRequests, sum, type Counts } from './lib/requests.ts';

const { values: opt } = parseArgs({
  options: {
    replicas: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    grace: { type: 'string', default: '1' },
    'floor-samples': { type: 'string', default: '3' },
    configs: { type: 'string', default: 'inplace,recreate,sts' },
    workload: { type: 'string', default: 'app' },
    'start-seconds': { type: 'string', default: '5' },
    json: { type: 'string' },
  },
});
const REPLICAS = Number(opt.replicas);
const RUNS = Number(opt.runs);
const GRACE = Number(opt.grace);
const SAMPLES = Number(opt['floor-samples']);
const CONFIGS = opt.configs.split(',') as RealConfig[];
const QUIET_MS = 2_000;
const WORKLOAD = opt.workload === 'slow' ? 'slow' : 'app';
const START_SECONDS = Number(opt['start-seconds']);

const clock = (): number => performance.timeOrigin + performance.now();
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);
const load1 = (): number => loadavg()[0] ?? 0;
const s1 = (ms: number): string => (ms / 1000).toFixed(1);
const s2 = (ms: number): string => (ms / 1000).toFixed(2);

interface Target {
  config: RealConfig;
  w: Workload;
  timeline: PodTimeline;
  steps: StepRecorder | undefined;
  shape: RealShape;
}

interface Measured {
  run: number;
  config: RealConfig;
  image: string;
  ms: number;
  statusLagMs: number;
  load: [number, number];
  recreated: number;
  restartCounts: number[];
  /** In place: per pod, the segments of SEGMENTS (ms). */
  segments?: number[][];
  /** In place: pods seen Ready with the new image in the spec while the gate was False. */
  staleReady?: number;
  /** ebb's writes in the window, by request (ebb's sides only). */
  writes?: Record<string, number>;
}

/**
 * The in-place steps of one pod as spans between the points the step recorder saw: previous pod Ready (or the
 * template change), gate False, spec image, gate True, container ready, pod Ready. The gate turns True once
 * the kubelet has the patch, so usually before the container is ready (it is not a chain).
 */
const SEGMENTS: [string, keyof PodSteps | 'prev', keyof PodSteps][] = [
  ['previous pod Ready (or template change) → gate False (ebb)', 'prev', 'gateFalse'],
  ['gate False → new image in the spec (ebb)', 'gateFalse', 'specImage'],
  ['new image in the spec → gate True (ebb, once the kubelet has the patch)', 'specImage', 'gateTrue'],
  ['new image in the spec → container ready (kubelet: stop, start, probe)', 'specImage', 'containerReady'],
  ['container ready → pod Ready (kubelet)', 'containerReady', 'ready'],
];

function segmentsOf(steps: PodSteps[], t0: number): number[][] {
  const ord = (s: PodSteps): number => Number(s.name.slice(s.name.lastIndexOf('-') + 1));
  const out: number[][] = SEGMENTS.map(() => []);
  let prev = t0;
  for (const s of [...steps].sort((a, b) => ord(b) - ord(a))) {
    const at = (k: keyof PodSteps | 'prev'): number | undefined => (k === 'prev' ? prev : typeof s[k] === 'number' ? s[k] : undefined);
    SEGMENTS.forEach(([, from, to], i) => {
      const [a, b] = [at(from), at(to)];
      if (a !== undefined && b !== undefined) out[i]?.push(b - a);
    });
    if (s.ready !== undefined) prev = s.ready;
  }
  return out;
}

async function rollout(env: RealEnv, t: Target, run: number, image: string, { trace, signal }: { trace: EbbTrace; signal: AbortSignal }): Promise<Measured> {
  const before = new Map(t.timeline.current().map((p) => [p.metadata.name, p.metadata.uid]));
  const l0 = load1();
  const wall0 = Date.now();
  const t0 = clock();
  t.steps?.begin(image, t0, before);
  await setRealImage(env.rest, t.w, image, GRACE, t.shape);
  const done = await abortable(t.timeline.until(allAt(t.w.name, REPLICAS, image), 900_000, `${t.w.name} at ${image}`), signal);
  const l1 = load1();
  await waitStatusSettled(env.rest, t.w, 120_000);
  const statusLagMs = clock() - done;
  await sleep(QUIET_MS, signal);
  const pods = t.timeline.current().filter((p) => p.metadata.name.startsWith(`${t.w.name}-`));
  const steps: PodSteps[] = t.steps?.end() ?? [];
  const writes: Counts = new Map([...trace.requestsIn(wall0, Date.now())].filter(([k]) => isWrite(k)));
  return {
    run,
    config: t.config,
    image,
    ms: done - t0,
    statusLagMs,
    load: [l0, l1],
    recreated: pods.filter((p) => before.get(p.metadata.name) !== p.metadata.uid).length,
    restartCounts: pods.map((p) => p.status?.containerStatuses?.[0]?.restartCount ?? -1),
    ...(t.steps ? { segments: segmentsOf(steps, t0), staleReady: steps.filter((x) => x.readyWhileGateFalse !== undefined).length } : {}),
    ...(t.config !== 'sts' ? { writes: Object.fromEntries(writes) } : {}),
  };
}

/** ebb's writes per pod updated of each measurement, and by request over all of them (per pod). */
function writesPerPod(ms: Measured[]): { perRun: number[]; byKey: string } {
  const perRun = ms.map((m) => sum(new Map(Object.entries(m.writes ?? {}))) / REPLICAS);
  const keys = new Map<string, number>();
  for (const m of ms) for (const [k, n] of Object.entries(m.writes ?? {})) keys.set(k, (keys.get(k) ?? 0) + n);
  const byKey = [...keys]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `\`${k}\` ${(n / (REPLICAS * ms.length)).toFixed(2)}`)
    .join(', ');
  return { perRun, byKey };
}

function report(all: Measured[], floors: FloorSamples, images: string[]): string {
  const by = (c: RealConfig): Measured[] => all.filter((m) => m.config === c);
  const upstream = median(by('sts').map((m) => m.ms));
  const floorOf = (c: RealConfig): number => REPLICAS * median(c === 'inplace' ? floors.earlyMs : floors.recreateMs);
  const rows = CONFIGS.map((c) => {
    const times = by(c).map((m) => m.ms);
    return [
      CONFIG_LABEL[c],
      medianSpread(times, s1),
      Number.isFinite(upstream) ? (median(times) / upstream).toFixed(2) : '–',
      s2(median(times) / REPLICAS),
      `${s1(floorOf(c))} (${c === 'inplace' ? 'in place + early gate' : 'recreate'})`,
      (median(times) / floorOf(c)).toFixed(2),
      medianSpread(
        by(c).map((m) => m.statusLagMs),
        s1,
      ),
      c === 'sts' ? '–' : medianSpread(writesPerPod(by(c)).perRun, (n) => n.toFixed(2)),
    ];
  });
  const lines = [
    `## Real node: ${WORKLOAD === 'slow' ? `the slow pod (a volume, ${START_SECONDS} s init), ` : ''}${REPLICAS} replicas on real-node-0, rolling image update ${images.join(' ↔ ')} (no pull), maxUnavailable 1, OrderedReady, grace ${GRACE} s, ${RUNS} runs (median (min–max))`,
    '',
    table(['config', 'rollout s', '÷ upstream', 's / pod', `kubelet floor s (${REPLICAS} × per pod)`, '÷ floor', 'status lag s', 'ebb writes / pod'], rows),
    '',
    ...CONFIGS.filter((c) => c !== 'sts' && by(c).length > 0).map(
      (c) => `${CONFIG_LABEL[c]}: ebb writes per pod updated by request: ${writesPerPod(by(c)).byKey}.`,
    ),
    '',
    `Kubelet floor per pod, bare pod on the real node, ${floors.inPlaceMs.length} samples each (median (min–max), s): ` +
      `in place (image patch → new container ready, pod Ready) ${medianSpread(floors.inPlaceMs, s2)}; ` +
      `in place + gate (by hand: gate False, image patch, container ready, gate True → pod Ready) ${medianSpread(floors.gatedMs, s2)}, ` +
      `of which image patch → container ready ${medianSpread(floors.gatedKubeletMs, s2)} and gate True → pod Ready ${medianSpread(floors.gatedReadyMs, s2)}, ` +
      `image patch → pod Ready ${medianSpread(floors.gatedPatchReadyMs, s2)}; ` +
      `in place + early gate (by hand: gate False, image patch, gate True once observedGeneration shows the patch → pod Ready) ${medianSpread(floors.earlyMs, s2)}, ` +
      `of which image patch → pod Ready ${medianSpread(floors.earlyPatchReadyMs, s2)}; ` +
      `recreate (delete → gone → create → Ready) ${medianSpread(floors.recreateMs, s2)}, of which delete → gone ${medianSpread(floors.terminateMs, s2)}.`,
    '',
  ];
  const ip = by('inplace');
  if (ip.length > 0) {
    const rowsOf = SEGMENTS.map(([name], i) => [
      name,
      medianSpread(
        ip.flatMap((m) => m.segments?.[i] ?? []),
        (n) => n.toFixed(0),
      ),
      medianSpread(
        ip.map((m) => (m.segments?.[i] ?? []).reduce((a, b) => a + b, 0)),
        s1,
      ),
    ]);
    lines.push(
      `### In place on the real node: where each pod's time went`,
      '',
      table(['segment', 'per pod ms (all pods, all runs)', 'Σ per run s'], rowsOf),
      '',
    );
  }
  for (const m of all) {
    lines.push(
      `- run ${m.run} ${CONFIG_LABEL[m.config]} → ${m.image.slice(m.image.lastIndexOf(':') + 1)}: ${s2(m.ms)} s; recreated pods ${m.recreated}; ` +
        `restartCounts ${[...new Set(m.restartCounts)].join('/')}${m.staleReady !== undefined ? `; pods Ready with the new spec while the gate was False ${m.staleReady}` : ''}; load ${m.load.map((n) => n.toFixed(2)).join('→')}`,
    );
  }
  return lines.join('\n');
}

/** The workloads of every config, created on `image`, Ready and settled; each with its pod watch. */
async function createTargets(env: RealEnv, ns: string, image: string, shape: RealShape, signal: AbortSignal): Promise<Target[]> {
  const targets: Target[] = [];
  for (const config of CONFIGS) {
    const w = realWorkload(config, ns, config === 'inplace' ? 'ip' : config === 'recreate' ? 'rc' : 'sts', REPLICAS);
    const timeline = new PodTimeline(env.rest, ns, selectorOf(w));
    await timeline.start();
    const steps = config === 'inplace' ? new StepRecorder(env.rest, ns, selectorOf(w)) : undefined;
    await steps?.start();
    targets.push({ config, w, timeline, steps, shape });
    await createRealWorkload(env.rest, config, w, { image, graceSeconds: GRACE, shape });
  }
  for (const t of targets) await abortable(t.timeline.until(allAt(t.w.name, REPLICAS, image), 600_000, `${t.w.name} Ready`), signal);
  for (const t of targets) await waitStatusSettled(env.rest, t.w, 120_000);
  return targets;
}

async function main(): Promise<void> {
  const signal = interruptSignal();
  const dir = await mkdtemp(join(tmpdir(), 'ebb-rn-bench-'));
  progress(`sandbox with a real node in ${dir}; ${REPLICAS} replicas, ${RUNS} runs; load ${load1().toFixed(2)}`);
  // ebb's clients are the KubeRests without a `request` of their own: the bench's and the sandbox's get one.
  const trace = new EbbTrace();
  trace.hookClients();
  const env = await startRealEnv({ dir, daemon: false, signal });
  countRequests(env.rest);
  countRequests(env.sb.rest);
  const targets: Target[] = [];
  const floors: FloorPod[] = [];
  try {
    const images = ['v1', 'v2'].map((v) => `${env.registry}/ebb/app:${v}`) as [string, string];
    for (const image of images) await env.cri.pullImage(image, { signal });
    const ns = await freshNamespace(env.rest, 'rn-bench', signal);
    const shape: RealShape = WORKLOAD === 'slow' ? { kind: 'slow', initImage: images[0], startSeconds: START_SECONDS } : APP_SHAPE;
    targets.push(...(await createTargets(env, ns, images[0], shape, signal)));
    for (const [name, gated] of [
      ['floor', false],
      ['floor-gated', true],
    ] as const) {
      floors.push(new FloorPod(env.rest, ns, { name, gated, graceSeconds: GRACE, signal }));
      await floors[floors.length - 1]?.start(images[0]);
    }
    progress(`all workloads Ready; load ${load1().toFixed(2)}`);
    const samples = emptySamples();
    const all: Measured[] = [];
    for (let run = 1; run <= RUNS; run++) {
      for (const f of floors) await f.measure(images, SAMPLES, samples);
      progress(
        `run ${run} floor so far: in place ${samples.inPlaceMs.map(s2).join(', ')}; gated ${samples.gatedMs.map(s2).join(', ')}; early gate ${samples.earlyMs.map(s2).join(', ')}; recreate ${samples.recreateMs.map(s2).join(', ')}`,
      );
      const image = run % 2 === 1 ? images[1] : images[0];
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + run - 1) % targets.length]!;
        const m = await rollout(env, t, run, image, { trace, signal });
        all.push(m);
        const writes = m.writes ? `; ebb writes/pod ${(writesPerPod([m]).perRun[0] ?? 0).toFixed(2)}` : '';
        progress(`run ${run} ${CONFIG_LABEL[t.config]}: ${s2(m.ms)} s; recreated ${m.recreated}${writes}; load ${load1().toFixed(2)}`);
      }
    }
    process.stdout.write(`${report(all, samples, images)}\n`);
    if (opt.json) await writeFile(opt.json, JSON.stringify({ all, samples }, null, 2));
  } finally {
    for (const f of floors) await f.stop().catch(() => undefined);
    for (const t of targets) {
      await t.timeline.stop();
      await t.steps?.stop();
    }
    await env.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await runToExit(main);
