/**
 * Pre-warm pull budget benchmark: many Apps roll out new images at the same moment, each with the defaults
 * (`imagePrewarm: {enabled: true}`), on a few simulated nodes whose uncached pulls take --pull seconds. While
 * they roll, the pre-warm pulls in progress are sampled every 250 ms from the ImageLists (per ImageList, each
 * App whose entries are not all Pulled or Failed counts one) and from the budget's own count in Redis; neither
 * may ever exceed --budget.
 *
 *   node bench/prewarm-budget.ts [--apps 24] [--replicas 3] [--nodes 4] [--pull 5] [--budget 6] [--json out.json]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { API_VERSION, APP_KIND, appRef } from '../src/api/group.ts';
import { waitFor } from '../src/common/wait.ts';
import { PatchType } from '../src/kube/rest.ts';
import { redisConnection } from '../src/queue/connection.ts';
import { pullsInProgress } from '../src/workers/shared/pull-budget.ts';
import {
  benchNamespace,
  daemonCounters,
  kubeletPullsSince,
  prePullEverywhere,
  prewarmPullsInProgress,
  progress,
  startPrewarmEnv,
  type PrewarmEnv,
} from './lib/prewarm-env.ts';
import { table } from './lib/report.ts';
import { readWorkload, statusSettled, type Workload } from './lib/workloads.ts';

const { values: opt } = parseArgs({
  options: {
    apps: { type: 'string', default: '24' },
    replicas: { type: 'string', default: '3' },
    nodes: { type: 'string', default: '4' },
    pull: { type: 'string', default: '5' },
    budget: { type: 'string', default: '6' },
    json: { type: 'string' },
  },
});
const APPS = Number(opt.apps);
const REPLICAS = Number(opt.replicas);
const NODES = Number(opt.nodes);
const PULL_MS = Number(opt.pull) * 1000;
const BUDGET = Number(opt.budget);
const LABEL = 'bench.ebb.dev/set';
const OLD_IMAGE = `registry.example.com/bench/web:old-${randomBytes(3).toString('hex')}`;

function template(name: string, image: string): Record<string, unknown> {
  return {
    metadata: { labels: { [LABEL]: name } },
    spec: {
      terminationGracePeriodSeconds: 1,
      // One pod of an App per node: each of its pods needs its own pull.
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { [LABEL]: name } }, topologyKey: 'kubernetes.io/hostname' }],
        },
      },
      containers: [
        { name: 'main', image, readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 }, resources: { requests: { cpu: '1m', memory: '1Mi' } } },
      ],
    },
  };
}

async function createApp(env: PrewarmEnv, w: Workload): Promise<void> {
  const spec = {
    replicas: REPLICAS,
    selector: { matchLabels: { [LABEL]: w.name } },
    serviceName: w.name,
    podManagementPolicy: 'OrderedReady',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, podUpdatePolicy: 'InPlaceIfPossible' } },
    template: template(w.name, OLD_IMAGE),
    imagePrewarm: { enabled: true },
  };
  await env.rest.create(
    { ...appRef(w.namespace), name: undefined },
    { apiVersion: API_VERSION, kind: APP_KIND, metadata: { name: w.name, namespace: w.namespace }, spec },
  );
}

async function allSettled(env: PrewarmEnv, ws: readonly Workload[], timeoutMs: number): Promise<void> {
  await waitFor(
    async () => ((await Promise.all(ws.map(async (w) => statusSettled(await readWorkload(env.rest, w), REPLICAS)))).every(Boolean) ? true : undefined),
    {
      timeoutMs,
      intervalMs: 500,
      what: 'every App settled',
    },
  );
}

interface Peaks {
  imageLists: number;
  redis: number;
  samples: number;
}

/** Samples the pulls in progress until `done` aborts; answers the highest counts seen. */
async function sample(env: PrewarmEnv, done: AbortSignal): Promise<Peaks> {
  const redis = redisConnection(env.sb.redisUrl, { forWorker: false, name: 'bench-budget' });
  const peaks: Peaks = { imageLists: 0, redis: 0, samples: 0 };
  try {
    while (!done.aborted) {
      const [lists, counted] = await Promise.all([prewarmPullsInProgress(env.rest), pullsInProgress(redis, env.prefix)]);
      peaks.imageLists = Math.max(peaks.imageLists, lists);
      peaks.redis = Math.max(peaks.redis, counted);
      peaks.samples++;
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    redis.disconnect();
  }
  return peaks;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-pwb-'));
  const env = await startPrewarmEnv(dir, NODES, PULL_MS, { EBB_PREWARM_PULL_BUDGET: String(BUDGET) });
  try {
    await prePullEverywhere(env, OLD_IMAGE, 'setup');
    const ns = await benchNamespace(env.rest, 'pwb');
    const ws: Workload[] = Array.from({ length: APPS }, (_, i) => ({
      kind: 'ebb',
      policy: 'OrderedReady',
      namespace: ns,
      name: `app-${i}`,
      replicas: REPLICAS,
    }));
    for (const w of ws) await createApp(env, w);
    await allSettled(env, ws, 1_200_000);
    const tag = randomBytes(3).toString('hex');
    const daemonBefore = await daemonCounters(env);
    progress(`${APPS} Apps settled; rolling out new images, one per App`);
    const done = new AbortController();
    const peaks = sample(env, done.signal);
    const t0 = Date.now();
    await Promise.all(
      ws.map((w) =>
        env.rest.patch(appRef(ns, w.name), { spec: { template: template(w.name, `registry.example.com/bench/${w.name}:new-${tag}`) } }, PatchType.merge),
      ),
    );
    await allSettled(env, ws, 1_800_000);
    const rolloutS = (Date.now() - t0) / 1000;
    done.abort();
    const seen = await peaks;
    const daemonPulls = (await daemonCounters(env)).pulls - daemonBefore.pulls;
    const kubeletPulls = await kubeletPullsSince(env, ns, t0);
    const result = { apps: APPS, replicas: REPLICAS, nodes: NODES, pullS: PULL_MS / 1000, budget: BUDGET, rolloutS, ...seen, daemonPulls, kubeletPulls };
    progress(JSON.stringify(result));
    process.stdout.write(
      `${APPS} Apps × ${REPLICAS} replicas on ${NODES} nodes, all rolling at once; pull ${PULL_MS / 1000} s; EBB_PREWARM_PULL_BUDGET=${BUDGET}\n` +
        table(
          ['all rolled out s', 'max pre-warm pulls in progress (ImageLists)', 'max in the budget (Redis)', 'samples', 'daemon pulls', 'kubelet pulls'],
          [[rolloutS.toFixed(1), String(seen.imageLists), String(seen.redis), String(seen.samples), String(daemonPulls), String(kubeletPulls)]],
        ) +
        '\n',
    );
    if (opt.json) await writeFile(opt.json, JSON.stringify(result, null, 2));
  } finally {
    await env.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
