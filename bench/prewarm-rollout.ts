/**
 * Pre-warm benchmark: a rolling image update of N replicas, one pod per node, on a pull-heavy profile (every
 * uncached pull takes --pull seconds; a container restart costs about 1.5 s), side by side on one sandbox:
 *
 *   floor           ebb in place, the new image already on every node (the floor without pulls)
 *   inplace         ebb in place, no pre-warm (every pod waits for its own pull)
 *   prewarm         ebb in place with `imagePrewarm: {enabled: true}`: the defaults (measured lookahead, the budget)
 *   prewarm-tuned   ebb in place with imagePrewarm, lookahead and parallelism from the flags
 *   canary          ebb in place, canary [{replicas: 1}, {pause: {duration: --pause s}}], then the rest
 *   canary-prewarm  the same with `imagePrewarm: {enabled: true}`
 *   sts             the upstream StatefulSet controller (kube-controller-manager), same template
 *
 *   node bench/prewarm-rollout.ts [--replicas 20] [--pull 20] [--pause 60] [--lookahead 10] [--parallelism 10]
 *                                 [--configs floor,inplace,prewarm,prewarm-tuned,canary,canary-prewarm,sts]
 *                                 [--budget 32] [--json out.json]
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
import { API_VERSION, APP_KIND, appRef } from '../src/api/group.ts';
import { waitFor } from '../src/common/wait.ts';
import { core } from '../src/kube/paths.ts';
import { PatchType } from '../src/kube/rest.ts';
import {
  benchNamespace,
  daemonCounters,
  kubeletPullsSince,
  prePullEverywhere,
  progress,
  startPrewarmEnv,
  transfers,
  type PrewarmEnv as Env,
} from './lib/prewarm-env.ts';
import { table } from './lib/report.ts';
import { readWorkload, statusSettled, type Workload } from './lib/workloads.ts';

const { values: opt } = parseArgs({
  options: {
    replicas: { type: 'string', default: '20' },
    pull: { type: 'string', default: '20' },
    pause: { type: 'string', default: '60' },
    lookahead: { type: 'string', default: '10' },
    parallelism: { type: 'string', default: '10' },
    configs: { type: 'string', default: 'floor,inplace,prewarm,prewarm-tuned,canary,canary-prewarm,sts' },
    budget: { type: 'string', default: '32' },
    json: { type: 'string' },
  },
});
const REPLICAS = Number(opt.replicas);
const PULL_MS = Number(opt.pull) * 1000;
const PAUSE_S = Number(opt.pause);
type Config = 'floor' | 'inplace' | 'prewarm' | 'prewarm-tuned' | 'canary' | 'canary-prewarm' | 'sts';
const CONFIGS = opt.configs.split(',') as Config[];
const LABEL = 'bench.ebb.dev/set';
/** Every workload starts from this image, pulled on every node during setup. */
const OLD_IMAGE = `registry.example.com/bench/web:old-${randomBytes(3).toString('hex')}`;
interface Result {
  config: Config;
  rolloutS: number;
  kubeletPulls: number;
  pullsAfterPause: number | undefined;
  maxTransfersPerNode: number;
  daemonPulls: number;
  statusWritesPerImage: number | undefined;
  lookaheadSeen: string;
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
  const tuned = { enabled: true, lookahead: Number(opt.lookahead), parallelism: Number(opt.parallelism) };
  const prewarm = config === 'prewarm-tuned' ? { imagePrewarm: tuned } : config.endsWith('prewarm') ? { imagePrewarm: { enabled: true } } : {};
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

/** The pre-warm lookahead the App's status reported during the rollout, each change once (`all`: every pod left). */
async function watchLookahead(env: Env, w: Workload, done: AbortSignal): Promise<string> {
  const seen: string[] = [];
  while (!done.aborted) {
    const app = await env.rest.get<{ status?: { prewarm?: { lookahead?: number } } }>(appRef(w.namespace, w.name));
    const prewarm = app.status?.prewarm;
    const now = prewarm === undefined ? undefined : String(prewarm.lookahead ?? 'all');
    if (now !== undefined && seen.at(-1) !== now) seen.push(now);
    await new Promise((r) => setTimeout(r, 250));
  }
  return seen.join('→') || '–';
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
  const ns = await benchNamespace(env.rest, `pw-${config}`);
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
  const lookahead = config.endsWith('prewarm') || config === 'prewarm-tuned' ? watchLookahead(env, w, done.signal) : Promise.resolve('–');
  await setImage(env, config, w, image);
  await settled(env, w, 1_800_000);
  const rolloutS = (Date.now() - t0) / 1000;
  done.abort();
  const pauseEndedAt = await pauseEnd;
  const lookaheadSeen = await lookahead;
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
    lookaheadSeen,
  };
  progress(`${config}: ${JSON.stringify(result)}`);
  await env.rest.delete(core('namespaces', ns)).catch(() => undefined);
  return result;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-pw-'));
  const env = await startPrewarmEnv(dir, REPLICAS, PULL_MS, { EBB_PREWARM_PULL_BUDGET: opt.budget });
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
    `${REPLICAS} replicas, one per node, pull ${PULL_MS / 1000} s, canary pause ${PAUSE_S} s, prewarm-tuned: lookahead ${opt.lookahead}, parallelism ${opt.parallelism}; pull budget ${opt.budget}\n` +
      table(
        ['config', 'rollout s', 'kubelet pulls', 'pulls after pause', 'max fetches/node', 'daemon pulls', 'status writes/image', 'lookahead seen'],
        results.map((r) => [
          r.config,
          fmt(r.rolloutS),
          String(r.kubeletPulls),
          r.pullsAfterPause === undefined ? '–' : String(r.pullsAfterPause),
          String(r.maxTransfersPerNode),
          String(r.daemonPulls),
          fmt(r.statusWritesPerImage, 2),
          r.lookaheadSeen,
        ]),
      ) +
      '\n',
  );
  if (opt.json) await writeFile(opt.json, JSON.stringify(results, null, 2));
}

await main();
