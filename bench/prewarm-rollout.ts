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
 *   recreate        ebb with `podUpdatePolicy: ReCreate` (every pod deleted and created again), no pre-warm
 *   recreate-prewarm the same with `imagePrewarm: {enabled: true}`
 *   sts             the upstream StatefulSet controller (kube-controller-manager), same template
 *
 *   node bench/prewarm-rollout.ts [--replicas 20] [--pull 20] [--pause 60] [--lookahead 10] [--parallelism 10]
 *                                 [--configs floor,inplace,prewarm,prewarm-tuned,canary,canary-prewarm,sts]
 *                                 [--spare-nodes 0] [--budget 32] [--json out.json]
 *
 * `--spare-nodes` adds nodes beyond one per replica, so a recreated pod has a choice of nodes (kube-scheduler's
 * ImageLocality favours one that holds the image).
 *
 * Every node runs the real `ebb daemon` against its simulated CRI socket, which shares the image store the
 * simulated kubelet pulls from, so an image the daemon pulled starts a container without a pull. Per config:
 * rollout time (template change → every pod on the new image, Ready, status settled), kubelet pulls during
 * the rollout (the kubelet's `Pulling` Events), kubelet pulls after the canary pause ended, registry
 * transfers per node (no node should fetch the new image twice), the daemons' status writes per image, and the
 * highest `status.prewarm.podsOnWarmNodes` seen (pods created on a node after its pre-warm pull had finished),
 * and the pods created during the rollout whose kubelet never pulled (a recreated pod that found the image).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { appRef } from '../src/api/group.ts';
import { core } from '../src/kube/paths.ts';
import {
  benchNamespace,
  daemonCounters,
  kubeletPullsSince,
  newPodsWithoutPull,
  prePullEverywhere,
  progress,
  startPrewarmEnv,
  transfers,
  type PrewarmEnv as Env,
} from './lib/prewarm-env.ts';
import { createPrewarmWorkload, setPrewarmImage, waitSettled, watchPrewarm } from './lib/prewarm-workload.ts';
import { table } from './lib/report.ts';
import type { Workload } from './lib/workloads.ts';

const { values: opt } = parseArgs({
  options: {
    replicas: { type: 'string', default: '20' },
    pull: { type: 'string', default: '20' },
    pause: { type: 'string', default: '60' },
    lookahead: { type: 'string', default: '10' },
    parallelism: { type: 'string', default: '10' },
    configs: { type: 'string', default: 'floor,inplace,prewarm,prewarm-tuned,canary,canary-prewarm,sts' },
    budget: { type: 'string', default: '32' },
    'spare-nodes': { type: 'string', default: '0' },
    json: { type: 'string' },
  },
});
const REPLICAS = Number(opt.replicas);
const PULL_MS = Number(opt.pull) * 1000;
const PAUSE_S = Number(opt.pause);
type Config = 'floor' | 'inplace' | 'prewarm' | 'prewarm-tuned' | 'canary' | 'canary-prewarm' | 'recreate' | 'recreate-prewarm' | 'sts';
const CONFIGS = opt.configs.split(',') as Config[];
const NODES = REPLICAS + Number(opt['spare-nodes']);
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
  podsOnWarmNodes: number;
  newPodsWithoutPull: number;
}

function appSpec(config: Config): Record<string, unknown> {
  const canary = config.startsWith('canary') ? { canary: { steps: [{ replicas: 1 }, { pause: { duration: `${PAUSE_S}s` } }] } } : {};
  const tuned = { enabled: true, lookahead: Number(opt.lookahead), parallelism: Number(opt.parallelism) };
  const prewarm = config === 'prewarm-tuned' ? { imagePrewarm: tuned } : config.endsWith('prewarm') ? { imagePrewarm: { enabled: true } } : {};
  const podUpdatePolicy = config.startsWith('recreate') ? 'ReCreate' : 'InPlaceIfPossible';
  return {
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, podUpdatePolicy, ...canary } },
    ...prewarm,
  };
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
  await createPrewarmWorkload(env.rest, w, OLD_IMAGE, appSpec(config));
  await waitSettled(env.rest, w, REPLICAS, 900_000);
  const image = `registry.example.com/bench/web:new-${tag}`;
  if (config === 'floor') await prePullEverywhere(env, image, 'floor');
  const before = transfers(env);
  const daemonBefore = await daemonCounters(env);
  progress(`${config}: rolling out ${image}`);
  const t0 = Date.now();
  const done = new AbortController();
  const pauseEnd = config.startsWith('canary') ? watchPauseEnd(env, w, done.signal) : Promise.resolve(undefined);
  const none = { lookahead: '–', podsOnWarmNodes: 0 };
  const seen = config.endsWith('prewarm') || config === 'prewarm-tuned' ? watchPrewarm(env.rest, w, done.signal) : Promise.resolve(none);
  await setPrewarmImage(env.rest, w, image);
  await waitSettled(env.rest, w, REPLICAS, 1_800_000);
  const rolloutS = (Date.now() - t0) / 1000;
  done.abort();
  const pauseEndedAt = await pauseEnd;
  const { lookahead: lookaheadSeen, podsOnWarmNodes } = await seen;
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
    podsOnWarmNodes,
    newPodsWithoutPull: await newPodsWithoutPull(env, ns, t0),
  };
  progress(`${config}: ${JSON.stringify(result)}`);
  await env.rest.delete(core('namespaces', ns)).catch(() => undefined);
  return result;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-pw-'));
  const env = await startPrewarmEnv(dir, NODES, PULL_MS, { EBB_PREWARM_PULL_BUDGET: opt.budget });
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
    `${REPLICAS} replicas on ${NODES} nodes, at most one per node, pull ${PULL_MS / 1000} s, canary pause ${PAUSE_S} s, prewarm-tuned: lookahead ${opt.lookahead}, parallelism ${opt.parallelism}; pull budget ${opt.budget}\n` +
      table(
        [
          'config',
          'rollout s',
          'kubelet pulls',
          'pulls after pause',
          'max fetches/node',
          'daemon pulls',
          'status writes/image',
          'lookahead seen',
          'new pods without a pull',
          'pods on warm nodes (status)',
        ],
        results.map((r) => [
          r.config,
          fmt(r.rolloutS),
          String(r.kubeletPulls),
          r.pullsAfterPause === undefined ? '–' : String(r.pullsAfterPause),
          String(r.maxTransfersPerNode),
          String(r.daemonPulls),
          fmt(r.statusWritesPerImage, 2),
          r.lookaheadSeen,
          String(r.newPodsWithoutPull),
          String(r.podsOnWarmNodes),
        ]),
      ) +
      '\n',
  );
  if (opt.json) await writeFile(opt.json, JSON.stringify(results, null, 2));
}

await main();
