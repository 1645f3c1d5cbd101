/**
 * Pre-warm benchmark: a rolling image update of N replicas, one pod per node, on a pull-heavy profile (every
 * uncached pull takes --pull seconds; a container restart costs about 1.5 s), side by side on one sandbox:
 *
 *   floor           ebb in place, the new image already on every node (the floor without pulls)
 *   inplace         ebb in place, no pre-warm (every pod waits for its own pull)
 *   prewarm         ebb in place with imagePrewarm (lookahead and parallelism from the flags)
 *   canary          ebb in place, canary [{replicas: 1}, {pause: {duration: --pause s}}], then the rest
 *   canary-prewarm  the same with imagePrewarm
 *   sts             the upstream StatefulSet controller (kube-controller-manager), same template
 *
 *   node bench/prewarm-rollout.ts [--replicas 20] [--pull 20] [--pause 60] [--lookahead 10] [--parallelism 10]
 *                                 [--configs floor,inplace,prewarm,canary,canary-prewarm,sts] [--json out.json]
 *
 * Every node runs the real `ebb daemon` against its simulated CRI socket, which shares the image store the
 * simulated kubelet pulls from, so an image the daemon pulled starts a container without a pull. Per config:
 * rollout time (template change → every pod on the new image, Ready, status settled), kubelet pulls during
 * the rollout (the kubelet's `Pulling` Events), kubelet pulls after the canary pause ended, registry
 * transfers per node (no node should fetch the new image twice), and the daemons' status writes per image.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { API_VERSION, APP_KIND, appRef, imageListRef } from '../src/api/group.ts';
import type { ImageList } from '../src/api/image-list.ts';
import { waitFor } from '../src/common/wait.ts';
import { createLogger } from '../src/common/log.ts';
import { core } from '../src/kube/paths.ts';
import { KubeRest, loadKubeConfig, PatchType } from '../src/kube/rest.ts';
import { parseWatcherConfig } from '../src/watcher/config.ts';
import { startWatcher } from '../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../src/workers/config.ts';
import { reconcilers } from '../src/workers/reconcilers.ts';
import { startWorker } from '../src/workers/worker.ts';
import { startNodeDaemons, type NodeDaemons } from '../harness/sandbox/daemons.ts';
import { realisticProfile } from '../harness/sandbox/node/timings.ts';
import { startSandbox, type Sandbox } from '../harness/sandbox/sandbox.ts';
import { benchEbbEnv } from './lib/ebb-env.ts';
import { table } from './lib/report.ts';
import { readWorkload, statusSettled, type Workload } from './lib/workloads.ts';

const { values: opt } = parseArgs({
  options: {
    replicas: { type: 'string', default: '20' },
    pull: { type: 'string', default: '20' },
    pause: { type: 'string', default: '60' },
    lookahead: { type: 'string', default: '10' },
    parallelism: { type: 'string', default: '10' },
    configs: { type: 'string', default: 'floor,inplace,prewarm,canary,canary-prewarm,sts' },
    json: { type: 'string' },
  },
});
const REPLICAS = Number(opt.replicas);
const PULL_MS = Number(opt.pull) * 1000;
const PAUSE_S = Number(opt.pause);
type Config = 'floor' | 'inplace' | 'prewarm' | 'canary' | 'canary-prewarm' | 'sts';
const CONFIGS = opt.configs.split(',') as Config[];
const LABEL = 'bench.ebb.dev/set';
/** Every workload starts from this image, pulled on every node during setup. */
const OLD_IMAGE = `registry.example.com/bench/web:old-${randomBytes(3).toString('hex')}`;
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);

interface Env {
  sb: Sandbox;
  rest: KubeRest;
  daemons: NodeDaemons;
  stop(): Promise<void>;
}

interface Result {
  config: Config;
  rolloutS: number;
  kubeletPulls: number;
  pullsAfterPause: number | undefined;
  maxTransfersPerNode: number;
  daemonPulls: number;
  statusWritesPerImage: number | undefined;
}

function template(name: string, image: string): Record<string, unknown> {
  return {
    metadata: { labels: { [LABEL]: name } },
    spec: {
      terminationGracePeriodSeconds: 1,
      // One pod per node: every pod needs its own pull.
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { [LABEL]: name } }, topologyKey: 'kubernetes.io/hostname' }],
        },
      },
      containers: [
        { name: 'main', image, readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 }, resources: { requests: { cpu: '10m', memory: '16Mi' } } },
      ],
    },
  };
}

function appSpec(config: Config, name: string, image: string): Record<string, unknown> {
  const canary = config.startsWith('canary') ? { canary: { steps: [{ replicas: 1 }, { pause: { duration: `${PAUSE_S}s` } }] } } : {};
  const prewarm = config.endsWith('prewarm') ? { imagePrewarm: { enabled: true, lookahead: Number(opt.lookahead), parallelism: Number(opt.parallelism) } } : {};
  return {
    replicas: REPLICAS,
    selector: { matchLabels: { [LABEL]: name } },
    serviceName: name,
    podManagementPolicy: 'OrderedReady',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, podUpdatePolicy: 'InPlaceIfPossible', ...canary } },
    template: template(name, image),
    ...prewarm,
  };
}

async function setup(dir: string): Promise<Env> {
  const log = createLogger('bench', 'warn');
  const timings = { ...realisticProfile, pullMs: PULL_MS, volumeAttachMs: 0 };
  const sb = await startSandbox({ dir, nodes: REPLICAS, log, timings, extraControllers: ['statefulset-controller'] });
  const rest = new KubeRest(loadKubeConfig(sb.kubeconfig));
  const nodes = [...sb.sim.nodes.values()].map((n) => ({ name: n.name, criSocket: n.criSocket }));
  const daemons = await startNodeDaemons({ kubeconfig: sb.kubeconfig, nodes, log });
  const cfg = benchEbbEnv(sb);
  const watcher = await startWatcher(parseWatcherConfig(cfg), log);
  const worker = await startWorker(parseWorkerConfig(cfg), log, reconcilers());
  return {
    sb,
    rest,
    daemons,
    stop: async () => {
      await worker.stop();
      await watcher.stop();
      await daemons.stop();
      await sb.stop();
    },
  };
}

async function namespace(rest: KubeRest, config: Config): Promise<string> {
  const ns = `pw-${config}-${randomBytes(2).toString('hex')}`;
  await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await waitFor(() => rest.get(core('serviceaccounts', ns, 'default')), { timeoutMs: 60_000, what: 'default ServiceAccount' });
  return ns;
}

async function create(env: Env, config: Config, w: Workload, image: string): Promise<void> {
  const meta = { name: w.name, namespace: w.namespace };
  await env.rest.create(core('services', w.namespace), {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta,
    spec: { clusterIP: 'None', selector: { [LABEL]: w.name } },
  });
  if (config === 'sts') {
    const spec = { replicas: REPLICAS, selector: { matchLabels: { [LABEL]: w.name } }, serviceName: w.name, template: template(w.name, image) };
    await env.rest.create(
      { group: 'apps', version: 'v1', resource: 'statefulsets', namespace: w.namespace },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta, spec },
    );
    return;
  }
  await env.rest.create(
    { ...appRef(w.namespace), name: undefined },
    { apiVersion: API_VERSION, kind: APP_KIND, metadata: meta, spec: appSpec(config, w.name, image) },
  );
}

async function setImage(env: Env, config: Config, w: Workload, image: string): Promise<void> {
  const ref = config === 'sts' ? { group: 'apps', version: 'v1', resource: 'statefulsets', namespace: w.namespace, name: w.name } : appRef(w.namespace, w.name);
  await env.rest.patch(ref, { spec: { template: template(w.name, image) } }, PatchType.merge);
}

async function settled(env: Env, w: Workload, timeoutMs: number): Promise<void> {
  await waitFor(async () => (statusSettled(await readWorkload(env.rest, w), REPLICAS) ? true : undefined), {
    timeoutMs,
    intervalMs: 200,
    what: `${w.name} settled`,
  });
}

/**
 * Puts `image` on every node through ImageLists (field manager `bench-<what>`) and waits until each daemon
 * reports it Pulled: the old image before any workload is created (setup, not measured), and the new one for
 * the floor.
 */
async function prePullEverywhere(env: Env, image: string, what: string): Promise<void> {
  for (const node of env.sb.nodeNames) {
    const body = { apiVersion: API_VERSION, kind: 'ImageList', metadata: { name: node }, spec: { images: [{ image }] } };
    await env.rest.apply(imageListRef(node), body, `bench-${what}`);
  }
  const pulled = async (node: string): Promise<boolean> => {
    const list = await env.rest.get<ImageList>(imageListRef(node)).catch(() => undefined);
    return list?.status?.images?.some((s) => s.image === image && s.phase === 'Pulled') === true;
  };
  await waitFor(async () => ((await Promise.all(env.sb.nodeNames.map(pulled))).every(Boolean) ? true : undefined), {
    timeoutMs: 600_000,
    intervalMs: 500,
    what: 'floor pre-pull',
  });
}

async function kubeletPullsSince(env: Env, ns: string, sinceMs: number): Promise<number> {
  const events = await env.rest.list<{ reason?: string; firstTimestamp?: string; eventTime?: string }>(core('events', ns), { fieldSelector: 'reason=Pulling' });
  return events.items.filter((e) => Date.parse(e.firstTimestamp ?? e.eventTime ?? '') >= Math.floor(sinceMs / 1000) * 1000).length;
}

const transfers = (env: Env): Map<string, number> => new Map([...env.sb.sim.nodes.values()].map((n) => [n.name, n.store.pullCount]));

async function daemonCounters(env: Env): Promise<{ pulls: number; writes: number }> {
  let pulls = 0;
  let writes = 0;
  for (const d of env.daemons.daemons.values()) {
    const text = await (await fetch(`http://127.0.0.1:${d.httpPort}/metrics`)).text();
    for (const line of text.split('\n')) {
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (line.startsWith('ebb_daemon_pulls_total{') && line.includes('result="success"')) pulls += value;
      if (line.startsWith('ebb_daemon_status_writes_total{') && line.includes('result="ok"')) writes += value;
    }
  }
  return { pulls, writes };
}

/** When the canary pause ended: the App's canary status leaves the pause step. Polled during the rollout. */
async function watchPauseEnd(env: Env, w: Workload, done: AbortSignal): Promise<number | undefined> {
  let paused = false;
  while (!done.aborted) {
    const app = await env.rest.get<{ status?: { canary?: { pausedAt?: string } } }>(appRef(w.namespace, w.name));
    const now = Date.now();
    if (app.status?.canary?.pausedAt) paused = true;
    else if (paused) return now;
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

async function runConfig(env: Env, config: Config): Promise<Result> {
  const ns = await namespace(env.rest, config);
  const w: Workload = { kind: config === 'sts' ? 'sts' : 'ebb', policy: 'OrderedReady', namespace: ns, name: 'web', replicas: REPLICAS };
  const tag = randomBytes(3).toString('hex');
  await create(env, config, w, OLD_IMAGE);
  await settled(env, w, 900_000);
  const image = `registry.example.com/bench/web:new-${tag}`;
  if (config === 'floor') await prePullEverywhere(env, image, 'floor');
  const before = transfers(env);
  const daemonBefore = await daemonCounters(env);
  progress(`${config}: rolling out ${image}`);
  const t0 = Date.now();
  const done = new AbortController();
  const pauseEnd = config.startsWith('canary') ? watchPauseEnd(env, w, done.signal) : Promise.resolve(undefined);
  await setImage(env, config, w, image);
  await settled(env, w, 1_800_000);
  const rolloutS = (Date.now() - t0) / 1000;
  done.abort();
  const pauseEndedAt = await pauseEnd;
  const after = transfers(env);
  const daemonAfter = await daemonCounters(env);
  const daemonPulls = daemonAfter.pulls - daemonBefore.pulls;
  const result: Result = {
    config,
    rolloutS,
    kubeletPulls: await kubeletPullsSince(env, ns, t0),
    pullsAfterPause: pauseEndedAt === undefined ? undefined : await kubeletPullsSince(env, ns, pauseEndedAt),
    maxTransfersPerNode: Math.max(...[...after].map(([node, n]) => n - (before.get(node) ?? 0))),
    daemonPulls,
    statusWritesPerImage: daemonPulls > 0 ? (daemonAfter.writes - daemonBefore.writes) / daemonPulls : undefined,
  };
  progress(`${config}: ${JSON.stringify(result)}`);
  await env.rest.delete(core('namespaces', ns)).catch(() => undefined);
  return result;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-pw-'));
  const env = await setup(dir);
  const results: Result[] = [];
  try {
    await prePullEverywhere(env, OLD_IMAGE, 'setup');
    for (const config of CONFIGS) results.push(await runConfig(env, config));
  } finally {
    await env.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const fmt = (n: number | undefined, digits = 1): string => (n === undefined ? '–' : n.toFixed(digits));
  process.stdout.write(
    `${REPLICAS} replicas, one per node, pull ${PULL_MS / 1000} s, canary pause ${PAUSE_S} s, lookahead ${opt.lookahead}, parallelism ${opt.parallelism}\n` +
      table(
        ['config', 'rollout s', 'kubelet pulls', 'pulls after pause', 'max fetches/node', 'daemon pulls', 'status writes/image'],
        results.map((r) => [
          r.config,
          fmt(r.rolloutS),
          String(r.kubeletPulls),
          r.pullsAfterPause === undefined ? '–' : String(r.pullsAfterPause),
          String(r.maxTransfersPerNode),
          String(r.daemonPulls),
          fmt(r.statusWritesPerImage, 2),
        ]),
      ) +
      '\n',
  );
  if (opt.json) await writeFile(opt.json, JSON.stringify(results, null, 2));
}

await main();
