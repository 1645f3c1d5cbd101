/**
 * The pull-heavy profile on real nodes, with real pulls: a rolling update of --replicas pods (default one per
 * node) spread over --nodes real nodes (default 3) from the small `ebb/app:v1` to an app image padded to about
 * --mb MB, pulled from the loopback registry through one proxy limited to --rate MB/s shared by every node, so
 * their pulls compete as for a real registry (lib/throttle-proxy.ts, the same for every side):
 *
 *   prewarm   ebb in place (InPlaceIfPossible) with imagePrewarm (the node's real `ebb daemon` pulls)
 *   inplace   ebb in place without pre-warm
 *   sts       the upstream StatefulSet controller (kube-controller-manager)
 *
 *   node bench/realnode-pull.ts [--nodes 3] [--replicas <nodes>] [--runs 2] [--mb 100] [--rate 20] [--lookahead 10] [--parallelism 10] [--configs prewarm,inplace,sts] [--json out.json]
 *
 * Each side gets a fresh workload (created on v1, not measured) and its own tag of the padded image (same
 * content). Before each side the padded image is removed from every node's containerd through CRI (the finished
 * sides' pods, then every reference of its image ID) and checked gone (lib/realnode-cache.ts). Rollout time:
 * template change → all pods on the new image, Ready, not terminating (pod watch); then status settled.
 * Pulls: the kubelet's `Pulling` Events (a pod waited for a pull) and "already present" `Pulled` Events,
 * the registry's access log (GETs of the padded layer blob and their bytes) and the daemon's pulls. Each run
 * also times one CRI pull of the padded image on a cold node (no pod): the cost of one pull.
 * Each real node is one image cache: at most one pull per node and side happens.
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
  type RealConfig,
} from './lib/realnode-workloads.ts';
import { paddedImage, pushTags } from './lib/padded-image.ts';
import { allAt, PodTimeline } from './lib/pod-timeline.ts';
import { makeAbsent } from './lib/realnode-cache.ts';
import { median, medianSpread, table } from './lib/report.ts';
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
    lookahead: { type: 'string', default: '10' },
    parallelism: { type: 'string', default: '10' },
    configs: { type: 'string', default: 'prewarm,inplace,sts' },
    json: { type: 'string' },
  },
});
const NODES = Number(opt.nodes);
const REPLICAS = Number(opt.replicas ?? opt.nodes);
const RUNS = Number(opt.runs);
const GRACE = 1;
const CONFIGS = opt.configs.split(',') as RealConfig[];
const PREWARM = { lookahead: Number(opt.lookahead), parallelism: Number(opt.parallelism) };
const REPO = 'ebb/pad';

const clock = (): number => performance.timeOrigin + performance.now();
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);
const load1 = (): number => loadavg()[0] ?? 0;
const s1 = (ms: number): string => (ms / 1000).toFixed(1);

interface Side {
  run: number;
  config: RealConfig;
  ms: number;
  statusLagMs: number;
  pulling: number;
  present: number;
  pulledIn: string[];
  layerFetches: number;
  layerMB: number;
  daemonPulls: number;
  load: [number, number];
}

interface Ctx {
  env: RealEnv;
  proxy: ThrottleProxy;
  pad: OciImage;
  /** Namespaces of the sides done (their pods deleted): what makeAbsent removes from the node. */
  finished: Set<string>;
  signal: AbortSignal;
}

async function side({ env, proxy, pad, finished, signal }: Ctx, config: RealConfig, run: number): Promise<Side> {
  const ns = await freshNamespace(env.rest, `rn-pull-${config}`, signal);
  const w = realWorkload(config, ns, 'web', REPLICAS);
  const timeline = new PodTimeline(env.rest, ns, selectorOf(w));
  await timeline.start();
  try {
    const v1 = `${env.registry}/ebb/app:v1`;
    await createRealWorkload(env.rest, config, w, { image: v1, graceSeconds: GRACE, prewarm: PREWARM });
    await abortable(timeline.until(allAt(w.name, REPLICAS, v1), 600_000, `${ns}/${w.name} Ready`), signal);
    await waitStatusSettled(env.rest, w, 120_000);
    const image = `${proxy.host}/${REPO}:p${run}-${config}`;
    await makeAbsent(env, pad, finished, signal);
    const events = await eventNames(env.rest, ns);
    const offset = await logOffset(env.registryLog);
    const ports = env.nodes.map((n) => env.daemons?.daemons.get(n.node.name)?.httpPort ?? 0);
    const allDaemonPulls = async (): Promise<number> => (await Promise.all(ports.map(daemonPulls))).reduce((a, b) => a + b, 0);
    const daemon0 = await allDaemonPulls();
    const l0 = load1();
    const t0 = clock();
    await setRealImage(env.rest, w, image, GRACE);
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

function report(sides: Side[], pulls: number[], pad: OciImage): string {
  const by = (c: RealConfig): Side[] => sides.filter((s) => s.config === c);
  const upstream = median(by('sts').map((s) => s.ms));
  const spread = (xs: number[]): string => (Math.min(...xs) === Math.max(...xs) ? String(xs[0]) : medianSpread(xs, (n) => String(n)));
  const rows = CONFIGS.map((c) => {
    const ss = by(c);
    const times = ss.map((s) => s.ms);
    return [
      CONFIG_LABEL[c],
      medianSpread(times, s1),
      Number.isFinite(upstream) ? (upstream / median(times)).toFixed(2) : '–',
      spread(ss.map((s) => s.pulling)),
      spread(ss.map((s) => s.present)),
      spread(ss.map((s) => s.layerFetches)),
      medianSpread(
        ss.map((s) => s.layerMB),
        (n) => n.toFixed(0),
      ),
      spread(ss.map((s) => s.daemonPulls)),
      medianSpread(
        ss.map((s) => s.statusLagMs),
        s1,
      ),
    ];
  });
  const mb = (pad.layer.bytes.length / 1e6).toFixed(1);
  return [
    `## Real nodes, pull-heavy: ${REPLICAS} replicas spread over ${NODES} real nodes, ebb/app:v1 → a ${mb} MB image (one layer) through one ${opt.rate} MB/s loopback proxy shared by the nodes, image absent from every node before each side, maxUnavailable 1, OrderedReady, ${RUNS} runs (median (min–max))`,
    '',
    table(
      [
        'config',
        'rollout s',
        'upstream ÷ this',
        'kubelet Pulling (pods that waited on a pull)',
        'Pulled "already present"',
        'layer fetches (registry)',
        'MB fetched',
        'daemon pulls',
        'status lag s',
      ],
      rows,
    ),
    '',
    `One cold pull of the ${mb} MB image through the proxy (CRI PullImage, no pod), per run: ${pulls.map(s1).join(', ')} s.`,
    '',
    ...sides.map(
      (s) =>
        `- run ${s.run} ${CONFIG_LABEL[s.config]}: ${s1(s.ms)} s; Pulling ${s.pulling}${s.pulledIn.length > 0 ? ` (pulled in ${s.pulledIn.join(', ')})` : ''}, already present ${s.present}, layer fetches ${s.layerFetches} (${s.layerMB.toFixed(0)} MB), daemon pulls ${s.daemonPulls}; load ${s.load.map((n) => n.toFixed(2)).join('→')}`,
    ),
  ].join('\n');
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
    const sides: Side[] = [];
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
          `run ${run} ${CONFIG_LABEL[config]}: ${s1(s.ms)} s; Pulling ${s.pulling}, present ${s.present}, layer fetches ${s.layerFetches}, daemon ${s.daemonPulls}`,
        );
      }
    }
    process.stdout.write(`${report(sides, pulls, pad)}\n`);
    if (opt.json) await writeFile(opt.json, JSON.stringify({ sides, pulls }, null, 2));
  } finally {
    await proxy?.stop();
    await env.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await runToExit(main);
