/**
 * The pull-heavy profile on real nodes, with real pulls: a rolling update of --replicas pods (default one per
 * node) spread over --nodes real nodes (default 3) from the small `ebb/app:v1` to an app image padded to about
 * --mb MB, pulled from the loopback registry through one proxy limited to --rate MB/s shared by every node, so
 * their pulls compete as for a real registry (lib/throttle-proxy.ts, the same for every side):
 *
 *   floor     ebb in place with the image already on every node (no pull at all): the floor. Before its template
 *             change every node pulls the image at once through the proxy (CRI pulls, no pod), timed: the
 *             transfer, the time all the bytes take through the registry's one bandwidth
 *   prewarm   ebb in place (InPlaceIfPossible) with imagePrewarm (the node's real `ebb daemon` pulls), the App's
 *             defaults (lookahead and parallelism unset) unless --lookahead/--parallelism set them (then "tuned")
 *   ordered   prewarm with `parallelism: 1` (a tuned side): the planner asks nodes in the rolling update's order,
 *             so the daemons pull one node at a time, the next pod's first (what pre-warm in rollout order costs)
 *   canary    prewarm with `canary.steps: [{replicas: 1}, {pause: {}}]`, resumed once every other node's ImageList
 *             reports the image Pulled (lib/realnode-canary.ts); kubelet `Pulling` after the resume counted
 *   inplace   ebb in place without pre-warm
 *   sts       the upstream StatefulSet controller (kube-controller-manager)
 *
 *   node bench/realnode-pull.ts [--nodes 3] [--replicas <nodes>] [--runs 2] [--mb 100] [--rate 20] [--lookahead N] [--parallelism N] [--configs floor,prewarm,ordered,canary,inplace,sts] [--json out.json]
 *
 * Each side gets a fresh workload (created on v1, not measured) and its own tag of the padded image (same
 * content). Before each side the padded image is removed from every node's containerd through CRI (the finished
 * sides' pods, then every reference of its image ID) and checked gone (lib/realnode-cache.ts). Rollout time:
 * template change → all pods on the new image, Ready, not terminating (pod watch); then status settled.
 * Pulls: the kubelet's `Pulling` Events (a pod waited for a pull) and "already present" `Pulled` Events,
 * the registry's access log (GETs of the padded layer blob and their bytes) and the daemon's pulls. Each run
 * also times one CRI pull of the padded image on a cold node (no pod): the cost of one pull.
 * Each real node is one image cache: at most one pull per node and side happens. The goal and the bound one
 * bandwidth puts under it come from the floor, the transfer and the single pull (lib/pull-goal.ts).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { abortable, freshNamespace, interruptSignal, runToExit, startRealEnv, type RealEnv } from './lib/realnode-env.ts';
import { coldPull } from './lib/realnode-floor.ts';
import {
  CONFIG_LABEL,
  blobFetches,
  createRealWorkload,
  daemonPulls,
  deleteRealWorkload,
  eventNames,
  logOffset,
  pullEvents,
  realWorkload,
  setRealImage,
  type Prewarm,
  type RealConfig,
} from './lib/realnode-workloads.ts';
import { pullReport, type PullSide } from './lib/realnode-pull-report.ts';
import { setCanary, throughPause, type PauseTimes } from './lib/realnode-canary.ts';
import { paddedImage, pushTags } from './lib/padded-image.ts';
import { allAt, imageOf, PodTimeline } from './lib/pod-timeline.ts';
import { makeAbsent } from './lib/realnode-cache.ts';
import { startThrottleProxy, type ThrottleProxy } from './lib/throttle-proxy.ts';
import { selectorOf, waitStatusSettled } from './lib/workloads.ts';
import type { OciImage } from '../harness/sandbox/real-node/oci-image.ts';

const { values: opt } = parseArgs({
  options: {
    nodes: { type: 'string', default: '3' },
    replicas: { type: 'string' },
    runs: { type: 'string', default: '2' },
    mb: { type: 'string', default: '100' },
    rate: { type: 'string', default: '20' },
    lookahead: { type: 'string' },
    parallelism: { type: 'string' },
    configs: { type: 'string', default: 'floor,prewarm,ordered,canary,inplace,sts' },
    json: { type: 'string' },
  },
});
const NODES = Number(opt.nodes);
const REPLICAS = Number(opt.replicas ?? opt.nodes);
const RUNS = Number(opt.runs);
const GRACE = 1;
type PullConfig = RealConfig | 'floor' | 'ordered' | 'canary';
const CONFIGS = opt.configs.split(',') as PullConfig[];
/** The App's defaults (both unset: measured lookahead, the cluster's pull budget) unless a flag sets one. */
const PREWARM: Prewarm = {
  ...(opt.lookahead === undefined ? {} : { lookahead: Number(opt.lookahead) }),
  ...(opt.parallelism === undefined ? {} : { parallelism: Number(opt.parallelism) }),
};
const PREWARM_LABEL =
  opt.lookahead === undefined && opt.parallelism === undefined
    ? 'defaults'
    : `tuned: lookahead ${opt.lookahead ?? 'unset'}, parallelism ${opt.parallelism ?? 'unset'}`;
/** The workload a side runs. */
const base = (c: PullConfig): RealConfig => (c === 'floor' ? 'inplace' : c === 'canary' || c === 'ordered' ? 'prewarm' : c);
/** The ordered side: one pre-warm pull at a time, asked in the rolling update's order. */
const ORDERED: Prewarm = { parallelism: 1 };
const LABEL = (c: PullConfig): string =>
  c === 'floor'
    ? 'floor: ebb in place, image on every node before the change'
    : c === 'ordered'
      ? 'ebb in place + imagePrewarm (tuned: parallelism 1, one node at a time in rollout order)'
      : c === 'canary'
        ? `ebb in place + imagePrewarm (${PREWARM_LABEL}), canary [{replicas: 1}, {pause: {}}] resumed once the other nodes pulled`
        : c === 'prewarm'
          ? `${CONFIG_LABEL.prewarm} (${PREWARM_LABEL})`
          : CONFIG_LABEL[c];
const REPO = 'ebb/pad';

const clock = (): number => performance.timeOrigin + performance.now();
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);
const load1 = (): number => loadavg()[0] ?? 0;
const s1 = (ms: number): string => (ms / 1000).toFixed(1);

interface Ctx {
  env: RealEnv;
  proxy: ThrottleProxy;
  pad: OciImage;
  /** Namespaces of the sides done (their pods deleted): what makeAbsent removes from the node. */
  finished: Set<string>;
  signal: AbortSignal;
}

async function side({ env, proxy, pad, finished, signal }: Ctx, config: PullConfig, run: number): Promise<PullSide> {
  const ns = await freshNamespace(env.rest, `rn-pull-${config}`, signal);
  const w = realWorkload(base(config), ns, 'web', REPLICAS);
  const timeline = new PodTimeline(env.rest, ns, selectorOf(w));
  await timeline.start();
  try {
    const v1 = `${env.registry}/ebb/app:v1`;
    await createRealWorkload(env.rest, base(config), w, { image: v1, graceSeconds: GRACE, prewarm: config === 'ordered' ? ORDERED : PREWARM });
    await abortable(timeline.until(allAt(w.name, REPLICAS, v1), 600_000, `${ns}/${w.name} Ready`), signal);
    await waitStatusSettled(env.rest, w, 120_000);
    if (config === 'canary') await setCanary(env.rest, w);
    const image = `${proxy.host}/${REPO}:p${run}-${config}`;
    await makeAbsent(env, pad, finished, signal);
    let transferMs: number | undefined;
    if (config === 'floor') {
      const t = clock();
      await Promise.all(env.nodes.map((n) => n.cri.pullImage(image, { signal })));
      transferMs = clock() - t;
    }
    const events = await eventNames(env.rest, ns);
    const offset = await logOffset(env.registryLog);
    const ports = env.nodes.map((n) => env.daemons?.daemons.get(n.node.name)?.httpPort ?? 0);
    const allDaemonPulls = async (): Promise<number> => (await Promise.all(ports.map(daemonPulls))).reduce((a, b) => a + b, 0);
    const daemon0 = await allDaemonPulls();
    const l0 = load1();
    const t0 = clock();
    await setRealImage(env.rest, w, image, GRACE);
    let pause: PauseTimes | undefined;
    if (config === 'canary') {
      const pods = (): { image: string | undefined; node: string | undefined }[] =>
        timeline.current().map((p) => ({ image: imageOf(p), node: p.spec?.nodeName }));
      const pulling = async (): Promise<number> => (await pullEvents(env.rest, ns, events, `${REPO}:`)).pulling;
      pause = await abortable(throughPause(env.rest, w, image, { pods, pulling }, signal), signal);
    }
    const done = await abortable(timeline.until(allAt(w.name, REPLICAS, image), 1_200_000, `${ns}/${w.name} at ${image}`), signal);
    const l1 = load1();
    await waitStatusSettled(env.rest, w, 120_000);
    const statusLagMs = clock() - done;
    const pulls = await pullEvents(env.rest, ns, events, `${REPO}:`);
    const fetched = await blobFetches(env.registryLog, offset, pad.layer.digest);
    return {
      run,
      config,
      ms: done - t0,
      statusLagMs,
      ...pulls,
      layerFetches: fetched.fetches,
      layerMB: fetched.bytes / 1e6,
      daemonPulls: (await allDaemonPulls()) - daemon0,
      load: [l0, l1],
      ...(transferMs === undefined ? {} : { transferMs }),
      ...(pause === undefined
        ? {}
        : {
            canary: {
              pauseMs: pause.pausedAt - t0,
              warmMs: pause.warmAt - pause.pausedAt,
              afterMs: done - pause.resumedAt,
              pullingAfter: pulls.pulling - pause.pullingAtResume,
            },
          }),
    };
  } finally {
    await deleteRealWorkload(
      env.rest,
      w,
      env.nodes.map((n) => n.node.name),
    );
    await abortable(
      timeline.until((pods) => pods.length === 0, 300_000, `${ns} pods gone`),
      signal,
    ).catch(() => undefined);
    finished.add(ns);
    await timeline.stop();
  }
}

async function main(): Promise<void> {
  const signal = interruptSignal();
  const t = Date.now();
  const pad = await paddedImage(Number(opt.mb), signal);
  progress(`padded image ${(pad.layer.bytes.length / 1e6).toFixed(1)} MB ready in ${Date.now() - t} ms`);
  const dir = await mkdtemp(join(tmpdir(), 'ebb-rn-pull-'));
  progress(`sandbox with ${NODES} real nodes in ${dir}; ${REPLICAS} replicas, ${RUNS} runs; load ${load1().toFixed(2)}`);
  const env = await startRealEnv({ dir, daemon: true, signal, realNodes: NODES });
  let proxy: ThrottleProxy | undefined;
  try {
    const tags = Array.from({ length: RUNS }, (_, i) => [`cold${i + 1}`, ...CONFIGS.map((c) => `p${i + 1}-${c}`)]).flat();
    await pushTags(env.registry, REPO, tags, pad, signal);
    proxy = await startThrottleProxy(env.registry, Number(opt.rate) * 1e6, signal);
    progress(`padded image pushed as ${tags.length} tags; proxy ${proxy.host} (pid ${proxy.pid}) at ${opt.rate} MB/s`);
    await Promise.all(env.nodes.map((n) => n.cri.pullImage(`${env.registry}/ebb/app:v1`, { signal })));
    const sides: PullSide[] = [];
    const finished = new Set<string>();
    const pulls: number[] = [];
    for (let run = 1; run <= RUNS; run++) {
      await makeAbsent(env, pad, finished, signal);
      pulls.push(await coldPull(env.cri, `${proxy.host}/${REPO}:cold${run}`, signal));
      progress(`run ${run}: one cold pull ${s1(pulls[pulls.length - 1] ?? 0)} s`);
      for (let i = 0; i < CONFIGS.length; i++) {
        const config = CONFIGS[(i + run - 1) % CONFIGS.length]!;
        const s = await side({ env, proxy, pad, finished, signal }, config, run);
        sides.push(s);
        progress(
          `run ${run} ${LABEL(config)}: ${s1(s.ms)} s; Pulling ${s.pulling}, present ${s.present}, layer fetches ${s.layerFetches}, daemon ${s.daemonPulls}`,
        );
      }
    }
    const setup = {
      configs: CONFIGS,
      label: (c: string) => LABEL(c as PullConfig),
      replicas: REPLICAS,
      nodes: NODES,
      runs: RUNS,
      rate: opt.rate,
      bytes: pad.layer.bytes.length,
    };
    process.stdout.write(`${pullReport(sides, pulls, setup)}\n`);
    if (opt.json) await writeFile(opt.json, JSON.stringify({ sides, pulls }, null, 2));
  } finally {
    await proxy?.stop();
    await env.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await runToExit(main);
