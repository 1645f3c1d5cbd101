/**
 * How many reconciles per second the queue carries before Redis (or the machine) saturates: one standalone
 * Redis, a three-primary Redis Cluster with one queue shard, and the same Cluster with three shards.
 *
 *   node bench/queue-shards.ts [--setups standalone,cluster-1,cluster-3] [--seconds 20] [--warmup 5]
 *     [--workers 2] [--concurrency 16] [--objects 20000] [--backlog 4000] [--in-flight 128]
 *
 * Per setup: `--workers` worker processes (bench/queue-worker.ts: the `ebb worker` shell with a reconcile
 * that does nothing) and, in this process, a producer that enqueues like the watcher (`enqueue` into the
 * object's shard) over `--objects` distinct Apps as fast as it can while the backlog stays under `--backlog`,
 * so the workers never run dry. After `--warmup` seconds it measures for `--seconds`: reconciles finished
 * per second (the workers' ebb_reconcile_total), the CPU share of every Redis server and of the clients, the
 * machine's CPU use (/proc/stat) and its load average. Where no Redis server reaches a full core (the clients
 * and whatever else runs on the machine take the CPUs first), the saturation rate is projected from the
 * Redis CPU one reconcile costs: the measured rate times 100 % over the busiest server's CPU share (Redis
 * runs commands on one thread, so one core per server is its ceiling).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedis } from '../harness/sandbox/redis.ts';
import { startRedisCluster } from '../harness/sandbox/redis-ha.ts';
import { sleep } from '../src/common/wait.ts';
import { redisConnection } from '../src/queue/connection.ts';
import { enqueue } from '../src/queue/enqueue.ts';
import type { ObjectKey } from '../src/queue/names.ts';
import { createReconcileQueues } from '../src/queue/queues.ts';
import { parseQueueConfig } from '../src/queue/settings.ts';
import { forKey } from '../src/queue/shards.ts';
import { cpuMeter, metric, spawnEbb, type BenchProcess } from './watcher-lib.ts';

const { values: args } = parseArgs({
  options: {
    setups: { type: 'string', default: 'standalone,cluster-1,cluster-3' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '16' },
    objects: { type: 'string', default: '20000' },
    backlog: { type: 'string', default: '4000' },
    'in-flight': { type: 'string', default: '128' },
  },
});
const SECONDS = Number(args.seconds);
const WARMUP_S = Number(args.warmup);
const WORKERS = Number(args.workers);
const OBJECTS = Number(args.objects);
const BACKLOG = Number(args.backlog);
const IN_FLIGHT = Number(args['in-flight']);

interface Setup {
  name: string;
  shards: number;
  env: Record<string, string>;
  /** Redis servers by name, for their CPU. */
  servers: Record<string, number>;
  stop(): Promise<void>;
}

async function startSetup(name: string, dir: string): Promise<Setup> {
  if (name === 'standalone') {
    const redis = await startRedis({ dir: await mkdtemp(join(dir, 'standalone-')) });
    return { name, shards: 1, env: { EBB_REDIS_URL: redis.url }, servers: { [`redis:${redis.port}`]: redis.pid }, stop: () => redis.stop() };
  }
  const match = /^cluster-(\d+)$/.exec(name);
  if (!match) throw new Error(`unknown setup ${name}: standalone or cluster-<shards>`);
  const cluster = await startRedisCluster({ dir: await mkdtemp(join(dir, 'cluster-')), primaries: 3 });
  return {
    name,
    shards: Number(match[1]),
    env: { EBB_REDIS_MODE: 'cluster', EBB_REDIS_CLUSTER_NODES: cluster.nodes.map((n) => `127.0.0.1:${n.port}`).join(',') },
    servers: Object.fromEntries(cluster.nodes.map((n) => [`redis:${n.port}`, n.pid])),
    stop: () => cluster.stop(),
  };
}

/** Busy and total jiffies of the whole machine (/proc/stat). */
async function machineCpu(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: total - idle, total };
}

async function reconcilesDone(workers: readonly { port: number }[]): Promise<number> {
  const texts = await Promise.all(workers.map(async (w) => (await fetch(`http://127.0.0.1:${w.port}/metrics`)).text()));
  return texts.reduce((sum, t) => sum + metric(t, 'ebb_reconcile_total'), 0);
}

const app = (i: number): ObjectKey => ({ kind: 'App', namespace: `team-${i % 20}`, name: `app-${i}` });

interface Row {
  setup: string;
  jobsPerS: number;
  enqueuesPerS: number;
  redisCpu: Record<string, number>;
  workersCpu: number;
  producerCpu: number;
  machineBusy: number;
  load1: number;
}

async function run(setup: Setup, kubeconfig: string): Promise<Row> {
  const env = {
    ...setup.env,
    KUBECONFIG: kubeconfig,
    EBB_QUEUE_SHARDS: String(setup.shards),
    EBB_WORKER_CONCURRENCY: args.concurrency,
    EBB_LOG_LEVEL: 'info',
    // Retries never happen here (the reconcile cannot fail); keep completed jobs few, as a busy install would.
    EBB_QUEUE_REMOVE_ON_COMPLETE: '100',
  };
  const cfg = parseQueueConfig(env);
  const producer = redisConnection(cfg.redis, { forWorker: false, name: 'bench-producer' });
  const queues = createReconcileQueues(producer, cfg);
  for (const q of queues) q.on('error', () => undefined);
  const procs: BenchProcess[] = Array.from({ length: WORKERS }, () => spawnEbb('queue-worker', env, () => false));
  const workers = await Promise.all(
    procs.map(async (p) => ({ port: Number((await p.waitForLog((l) => l.msg === 'worker started', 30_000, 'worker started'))['port']) })),
  );
  let stop = false;
  let enqueued = 0;
  let full = false;
  const watchBacklog = (async () => {
    while (!stop) {
      const counts = await Promise.all(queues.map((q) => q.getJobCounts('wait', 'prioritized')));
      full = counts.reduce((n, c) => n + (c['wait'] ?? 0) + (c['prioritized'] ?? 0), 0) >= BACKLOG;
      await sleep(50);
    }
  })();
  let next = 0;
  const lanes = Array.from({ length: IN_FLIGHT }, async () => {
    while (!stop) {
      if (full) {
        await sleep(5);
        continue;
      }
      const key = app(next++ % OBJECTS);
      await enqueue(forKey(queues, key), key);
      enqueued++;
    }
  });
  await sleep(WARMUP_S * 1000);
  const pids: Record<string, number> = { ...setup.servers, ...Object.fromEntries(procs.map((p, i) => [`worker-${i}`, p.pid])), producer: process.pid };
  const cpu = await cpuMeter(pids);
  const [done0, enq0, m0] = [await reconcilesDone(workers), enqueued, await machineCpu()];
  await sleep(SECONDS * 1000);
  const [done1, enq1, m1, used] = [await reconcilesDone(workers), enqueued, await machineCpu(), await cpu()];
  const load1 = loadavg()[0] ?? 0;
  stop = true;
  await Promise.all([...lanes, watchBacklog]);
  await Promise.all(procs.map((p) => p.stop()));
  await Promise.all(queues.map((q) => q.close()));
  producer.disconnect();
  const share = (s: number | undefined): number => (100 * (s ?? 0)) / SECONDS;
  return {
    setup: setup.name,
    jobsPerS: (done1 - done0) / SECONDS,
    enqueuesPerS: (enq1 - enq0) / SECONDS,
    redisCpu: Object.fromEntries(Object.keys(setup.servers).map((k) => [k, share(used[k])])),
    workersCpu: procs.reduce((sum, _, i) => sum + share(used[`worker-${i}`]), 0),
    producerCpu: share(used['producer']),
    machineBusy: (100 * (m1.busy - m0.busy)) / Math.max(1, m1.total - m0.total),
    load1,
  };
}

const dir = await mkdtemp(join(tmpdir(), 'ebb-queue-shards-'));
// The worker loads a kubeconfig at start; the empty reconcile never calls this (absent) apiserver.
const kubeconfig = join(dir, 'kubeconfig');
await writeFile(
  kubeconfig,
  [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]',
    'users: [{name: none, user: {token: bench}}]',
    'contexts: [{name: none, context: {cluster: none, user: none}}]',
    'current-context: none',
    '',
  ].join('\n'),
);
const rows: Row[] = [];
try {
  for (const name of args.setups.split(',')) {
    const setup = await startSetup(name, dir);
    try {
      const row = await run(setup, kubeconfig);
      rows.push(row);
      console.log(JSON.stringify(row));
    } finally {
      await setup.stop();
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
const f0 = (n: number): string => n.toFixed(0);
console.log(`\n${WORKERS} worker processes x ${args.concurrency} concurrency, ${OBJECTS} objects, ${SECONDS}s measured after ${WARMUP_S}s warm-up\n`);
console.log(
  '| setup | reconciles/s | enqueues/s | Redis CPU % per server | Redis CPU µs per reconcile (all servers) | projected saturation, reconciles/s (busiest server at 100 %) | workers CPU % (sum) | producer CPU % | machine busy % (2 CPUs) | load1 |',
);
console.log('| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) {
  const cpus = Object.values(r.redisCpu);
  const redis = cpus.map(f0).join(' / ');
  const perJobUs = (10_000 * cpus.reduce((a, b) => a + b, 0)) / Math.max(1, r.jobsPerS);
  const busiest = Math.max(...cpus);
  const projected = busiest > 0 ? (r.jobsPerS * 100) / busiest : 0;
  console.log(
    `| ${r.setup} | ${f0(r.jobsPerS)} | ${f0(r.enqueuesPerS)} | ${redis} | ${f0(perJobUs)} | ${f0(projected)} | ${f0(r.workersCpu)} | ${f0(r.producerCpu)} | ${f0(r.machineBusy)} | ${r.load1.toFixed(2)} |`,
  );
}
