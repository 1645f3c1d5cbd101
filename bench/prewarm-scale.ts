/**
 * Pre-warm benchmark for new pods and new nodes, on the pull-heavy profile (every uncached pull takes --pull
 * seconds) with a real `ebb daemon` on every simulated node, side by side on one sandbox. Every node carries a
 * warm-pool label. Each configuration gets an image no node holds yet, starts with --from replicas (their pulls
 * are setup), then scales to --replicas, one pod per node:
 *
 *   scale          ebb, no pre-warm: every new pod waits for its own pull
 *   scale-prewarm  ebb with `imagePrewarm: {enabled: true}`: the nodes new pods can land on pull as the scale-up starts
 *   pool           ebb with a warm pool (`imagePrewarm.nodeSelector` on the nodes' label): every node holds the
 *                  image before the scale-up
 *   sts            the upstream StatefulSet controller, same template and pod management policy
 *
 * Per configuration: time from the replicas change to every replica Ready (status settled), kubelet pulls in that
 * window (its `Pulling` Events: pulls on the critical path), new pods whose kubelet never pulled, and the highest
 * `status.prewarm.podsOnWarmNodes`.
 * Then, with the pool's App still running, --joins nodes join the running cluster one after another, each with the
 * pool's label and its own daemon: time from the start of the join to the node Ready, to the App's image in its
 * ImageList, and to the image Pulled there (the warm set of a new node).
 *
 *   node bench/prewarm-scale.ts [--replicas 20] [--from 3] [--pull 15] [--policy Parallel]
 *                               [--configs scale,scale-prewarm,sts,pool] [--joins 3] [--json out.json]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { imageListRef } from '../src/api/group.ts';
import type { ImageList } from '../src/api/image-list.ts';
import { waitFor } from '../src/common/wait.ts';
import { core } from '../src/kube/paths.ts';
import { PatchType } from '../src/kube/rest.ts';
import { benchNamespace, kubeletPullsSince, newPodsWithoutPull, progress, startPrewarmEnv, type PrewarmEnv as Env } from './lib/prewarm-env.ts';
import { createPrewarmWorkload, setReplicas, waitPrewarmPulled, waitSettled, watchPrewarm } from './lib/prewarm-workload.ts';
import { table } from './lib/report.ts';
import type { Policy, Workload } from './lib/workloads.ts';

const { values: opt } = parseArgs({
  options: {
    replicas: { type: 'string', default: '20' },
    from: { type: 'string', default: '3' },
    pull: { type: 'string', default: '15' },
    policy: { type: 'string', default: 'Parallel' },
    configs: { type: 'string', default: 'scale,scale-prewarm,sts,pool' },
    joins: { type: 'string', default: '3' },
    json: { type: 'string' },
  },
});
const REPLICAS = Number(opt.replicas);
const FROM = Number(opt.from);
const PULL_MS = Number(opt.pull) * 1000;
const POLICY = opt.policy as Policy;
type Config = 'scale' | 'scale-prewarm' | 'pool' | 'sts';
const CONFIGS = opt.configs.split(',') as Config[];
const POOL_KEY = 'bench.ebb.dev/pool';
const POOL = `warm-${randomBytes(2).toString('hex')}`;

interface ScaleResult {
  config: Config;
  scaleUpS: number;
  kubeletPulls: number;
  podsOnWarmNodes: number;
  newPodsWithoutPull: number;
}

interface JoinResult {
  node: string;
  readyS: number;
  listedS: number;
  pulledS: number;
}

const secondsSince = (t0: number): number => (Date.now() - t0) / 1000;

function prewarmOf(config: Config): Record<string, unknown> {
  if (config === 'pool') return { imagePrewarm: { enabled: true, nodeSelector: { [POOL_KEY]: POOL } } };
  return config === 'scale-prewarm' ? { imagePrewarm: { enabled: true } } : {};
}

async function runScale(env: Env, config: Config): Promise<{ result: ScaleResult; w: Workload; image: string }> {
  const ns = await benchNamespace(env.rest, `ps-${config}`);
  const w: Workload = { kind: config === 'sts' ? 'sts' : 'ebb', policy: POLICY, namespace: ns, name: 'web', replicas: FROM };
  const image = `registry.example.com/bench/web:${config}-${randomBytes(3).toString('hex')}`;
  await createPrewarmWorkload(env.rest, w, image, prewarmOf(config));
  await waitSettled(env.rest, w, FROM, 900_000);
  if (config === 'pool') await waitPrewarmPulled(env.rest, w, env.sb.nodeNames.length, 900_000);
  progress(`${config}: scaling ${FROM} → ${REPLICAS} (${image})`);
  const done = new AbortController();
  const seen = config === 'sts' || config === 'scale' ? Promise.resolve({ podsOnWarmNodes: 0 }) : watchPrewarm(env.rest, w, done.signal);
  const t0 = Date.now();
  await setReplicas(env.rest, w, REPLICAS);
  await waitSettled(env.rest, w, REPLICAS, 1_800_000);
  const scaleUpS = secondsSince(t0);
  // The status keeps reporting while a warm pool holds entries: one more poll so the last pods are counted.
  await new Promise((r) => setTimeout(r, 2_000));
  done.abort();
  const result: ScaleResult = {
    config,
    scaleUpS,
    kubeletPulls: await kubeletPullsSince(env, ns, t0),
    podsOnWarmNodes: (await seen).podsOnWarmNodes,
    newPodsWithoutPull: await newPodsWithoutPull(env, ns, t0),
  };
  progress(`${config}: ${JSON.stringify(result)}`);
  return { result, w: { ...w, replicas: REPLICAS }, image };
}

/** One node joins with the pool's label; times to Ready, to the image listed in its ImageList, to it Pulled. */
async function runJoin(env: Env, index: number, image: string): Promise<JoinResult> {
  const node = `joined-${index}-${randomBytes(2).toString('hex')}`;
  const t0 = Date.now();
  let listedS: number | undefined;
  const pulled = waitFor(
    async () => {
      const list = await env.rest.get<ImageList>(imageListRef(node)).catch(() => undefined);
      if (listedS === undefined && list?.spec?.images?.some((e) => e.image === image)) listedS = secondsSince(t0);
      return list?.status?.images?.some((s) => s.image === image && s.phase === 'Pulled') ? secondsSince(t0) : undefined;
    },
    { timeoutMs: 600_000, intervalMs: 100, what: `${image} pulled on ${node}` },
  );
  await env.joinNode(node, { [POOL_KEY]: POOL });
  const readyS = secondsSince(t0);
  const pulledS = await pulled;
  const result = { node, readyS, listedS: listedS ?? pulledS, pulledS };
  progress(`join: ${JSON.stringify(result)}`);
  return result;
}

async function labelPool(env: Env): Promise<void> {
  for (const node of env.sb.nodeNames) await env.rest.patch(core('nodes', undefined, node), { metadata: { labels: { [POOL_KEY]: POOL } } }, PatchType.merge);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-ps-'));
  const env = await startPrewarmEnv(dir, REPLICAS, PULL_MS);
  const scales: ScaleResult[] = [];
  const joins: JoinResult[] = [];
  try {
    await labelPool(env);
    let pool: { w: Workload; image: string } | undefined;
    for (const config of CONFIGS) {
      const run = await runScale(env, config);
      scales.push(run.result);
      if (config === 'pool') pool = run;
      else await env.rest.delete(core('namespaces', run.w.namespace)).catch(() => undefined);
    }
    if (pool) for (let i = 0; i < Number(opt.joins); i++) joins.push(await runJoin(env, i, pool.image));
  } finally {
    await env.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const fmt = (n: number): string => n.toFixed(1);
  process.stdout.write(
    `scale-up ${FROM} → ${REPLICAS} replicas on ${REPLICAS} nodes, one per node, ${POLICY}, pull ${PULL_MS / 1000} s\n` +
      table(
        ['config', 'scale-up s (to all Ready)', 'kubelet pulls', 'new pods without a pull', 'pods on warm nodes (status)'],
        scales.map((r) => [r.config, fmt(r.scaleUpS), String(r.kubeletPulls), String(r.newPodsWithoutPull), String(r.podsOnWarmNodes)]),
      ) +
      '\n',
  );
  if (joins.length > 0) {
    process.stdout.write(
      `a node joins with the pool's label (its daemon started once it is Ready); seconds from the start of the join\n` +
        table(
          ['node', 'Ready', 'image in its ImageList', 'image Pulled'],
          joins.map((j) => [j.node, fmt(j.readyS), fmt(j.listedS), fmt(j.pulledS)]),
        ) +
        '\n',
    );
  }
  if (opt.json) await writeFile(opt.json, JSON.stringify({ scales, joins }, null, 2));
}

await main();
