/**
 * Scale to zero: what an idle installation costs, and how fast it wakes up.
 *
 *   node bench/scale-to-zero.ts [--apps 100] [--idle-minutes 3] [--wakeups 20] [--cold-starts 5] [--poll-seconds 15]
 *                               [--resync 10m] [--dist]
 *
 * A private control plane and Redis; `--apps` Apps (no pods) in one namespace; `ebb watcher` with its KEDA
 * scaler. A worker reconciles every App once and stops, so the queue is empty. KEDA is played by a client
 * that holds StreamIsActive open and calls IsActive every `--poll-seconds` (deploy/keda's pollingInterval).
 *
 *  1. Idle, zero workers, for `--idle-minutes`: the watcher's CPU share (CPU seconds / wall seconds), Redis
 *     commands/s (INFO stats, this script's own INFO calls excluded), apiserver requests/s (its
 *     apiserver_request_total, every client: the control plane's own lease renewals included, broken down),
 *     and the scaler's pushes. The watcher's resync (EBB_RESYNC_PERIOD, 10 min by default, `--resync` sets
 *     it) enqueues every App, which would wake a worker: the pushes and resyncs in the window are printed.
 *  2. Wake-up: an App edit (PATCH sent) → the scaler pushes "active" on the stream; the job is then removed
 *     and the next edit waits until the stream said "inactive" again. Goal ≤ 50 ms.
 *  3. Cold start: with one reconcile waiting, `ebb worker` is spawned → its first `reconcile finished`.
 *     Goal ≤ 1.5 s. `--dist` runs the compiled JavaScript (`npm run build` first), as the image does.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { credentials, loadPackageDefinition, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { Redis } from 'ioredis';
import { appRef } from '../src/api/group.ts';
import { sleep, waitFor } from '../src/common/wait.ts';
import { PatchType } from '../src/kube/rest.ts';
import { createReconcileQueue } from '../src/queue/queues.ts';
import { parseQueueConfig } from '../src/queue/settings.ts';
import { PROJECT_ROOT } from '../harness/sandbox/paths.ts';
import { diff, readApiserverRequests, sum } from './lib/requests.ts';
import { benchEbbEnv } from './lib/ebb-env.ts';
import { cpuSeconds, createNamespace, inParallel, podlessApp, quantile, spawnEbb, startBenchCluster, summary, type BenchProcess } from './watcher-lib.ts';

const { values: args } = parseArgs({
  options: {
    apps: { type: 'string', default: '100' },
    'idle-minutes': { type: 'string', default: '3' },
    wakeups: { type: 'string', default: '20' },
    'cold-starts': { type: 'string', default: '5' },
    'poll-seconds': { type: 'string', default: '15' },
    /** EBB_RESYNC_PERIOD of the watcher; its default when empty. */
    resync: { type: 'string', default: '' },
    dist: { type: 'boolean', default: false },
  },
});
const APPS = Number(args.apps);
const IDLE_MS = Number(args['idle-minutes']) * 60_000;
const WAKEUPS = Number(args.wakeups);
const COLD_STARTS = Number(args['cold-starts']);
const POLL_MS = Number(args['poll-seconds']) * 1000;
const NS = 'idle';
const SO_REF = { name: 'ebb-worker', namespace: 'ebb-system', scalerMetadata: { jobsPerWorker: '50' } };

function log(text: string): void {
  process.stdout.write(`${new Date().toISOString()} ${text}\n`);
}

interface ScalerClient extends Client {
  IsActive(req: object, cb: (err: ServiceError | null, res: { result: boolean }) => void): void;
  StreamIsActive(req: object): ClientReadableStream<{ result: boolean }>;
}

function scalerClient(port: number): ScalerClient {
  const def = loadSync(join(PROJECT_ROOT, 'src', 'watcher', 'externalscaler.proto'), { keepCase: true, longs: Number, defaults: true });
  type Ctor = new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => ScalerClient;
  const pkg = loadPackageDefinition(def) as unknown as { externalscaler: { ExternalScaler: Ctor } };
  return new pkg.externalscaler.ExternalScaler(`127.0.0.1:${port}`, credentials.createInsecure());
}

async function redisCommands(redis: Redis): Promise<number> {
  const info = await redis.info('stats');
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? NaN);
}

/** Calls per Redis command so far (INFO commandstats). */
async function redisCommandStats(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  return new Map([...info.matchAll(/^cmdstat_(\S+):calls=(\d+)/gm)].map((m): [string, number] => [m[1]!, Number(m[2])]));
}

// Each spawned process adds an exit listener (watcher-lib); a run spawns up to a dozen.
process.setMaxListeners(50);
const cluster = await startBenchCluster();
const procs: BenchProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
const loadAtStart = (await import('node:os')).loadavg()[0]!;
try {
  const { rest } = cluster;
  await createNamespace(rest, NS);
  const names = Array.from({ length: APPS }, (_, i) => `app-${i}`);
  await inParallel(names, 16, (n) => rest.create(appRef(NS), podlessApp(n)));
  const env: Record<string, string> = { ...benchEbbEnv(cluster, [NS]), EBB_SCALER: 'true', EBB_LOG_LEVEL: 'info' };
  if (args.resync) env['EBB_RESYNC_PERIOD'] = args.resync;
  const cfg = parseQueueConfig({ EBB_REDIS_URL: cluster.redisUrl, EBB_QUEUE_PREFIX: env['EBB_QUEUE_PREFIX']! });
  const redis = new Redis(cluster.redisUrl, { maxRetriesPerRequest: null });
  const queue = createReconcileQueue(redis, cfg);
  cleanups.push(
    () => queue.close(),
    () => redis.disconnect(),
  );
  // `reconcile finished` is a debug line.
  const workerEnv = { ...env, EBB_LOG_LEVEL: 'debug' };
  const dist = { dist: args.dist };

  const watcher = spawnEbb('watcher', env, (l) => l.msg === 'watcher started' || l.msg === 'resync enqueued', dist);
  procs.push(watcher);
  const scalerPort = (await watcher.waitForLog((l) => l.msg === 'watcher started', 60_000, 'watcher started'))['scalerPort'] as number;
  const client = scalerClient(scalerPort);
  const pushes: { at: number; active: boolean }[] = [];
  const stream = client.StreamIsActive(SO_REF);
  stream.on('data', (m: { result: boolean }) => pushes.push({ at: Date.now(), active: m.result }));
  stream.on('error', () => undefined);
  let polls = 0;
  const poller = setInterval(() => client.IsActive(SO_REF, () => polls++), POLL_MS);
  cleanups.push(
    () => clearInterval(poller),
    () => stream.cancel(),
    () => client.close(),
  );

  // Every App reconciled once, so the idle phase starts with an empty queue.
  const drained = async (): Promise<boolean> => {
    const c = await queue.getJobCounts('wait', 'prioritized', 'active', 'delayed');
    return Object.values(c).every((n) => n === 0);
  };
  // Waiting or prioritized: tenant fairness gives a namespace's changes beyond its burst a priority tier.
  const waiting = async (): Promise<number> => Object.values(await queue.getJobCounts('wait', 'prioritized')).reduce((a, b) => a + b, 0);
  await waitFor(async () => ((await waiting()) >= APPS ? true : undefined), {
    timeoutMs: 60_000,
    what: 'the watcher to enqueue every App',
  });
  const first = spawnEbb('worker', workerEnv, (l) => l.msg === 'reconcile finished', dist);
  procs.push(first);
  await waitFor(async () => ((await drained()) ? true : undefined), { timeoutMs: 120_000, intervalMs: 200, what: 'the queue drained' });
  await first.stop();
  await waitFor(() => (pushes.at(-1)?.active === false ? true : undefined), { timeoutMs: 10_000, what: 'the scaler to push inactive' });
  log(`${APPS} Apps reconciled; idle with 0 workers for ${IDLE_MS / 60_000} min`);

  // 1. Idle.
  const apiBefore = (await readApiserverRequests(rest)).total;
  const statsBefore = await redisCommandStats(redis);
  const redisBefore = await redisCommands(redis);
  const cpuBefore = await cpuSeconds(watcher.pid);
  const pollsBefore = polls;
  const t0 = Date.now();
  const pushesBefore = pushes.length;
  await sleep(IDLE_MS);
  const wall = (Date.now() - t0) / 1000;
  const cpu = (await cpuSeconds(watcher.pid)) - cpuBefore;
  // This script's own commands in the window: the closing INFO (the opening one was counted before t0).
  const redisCmds = (await redisCommands(redis)) - redisBefore - 1;
  const statsAfter = await redisCommandStats(redis);
  const topRedis = [...statsAfter.entries()]
    .map(([cmd, n]): [string, number] => [cmd, n - (statsBefore.get(cmd) ?? 0) - (cmd === 'info' ? 2 : 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([cmd, n]) => `${cmd}=${(n / wall).toFixed(2)}/s`)
    .join(', ');
  const api = diff((await readApiserverRequests(rest)).total, apiBefore);
  const apiTotal = sum(api) - 1; // the closing GET /metrics is not in apiserver_request_total's resources anyway
  const top = [...api.entries()]
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([k, n]) => `${k}=${n}`)
    .join(', ');
  const resyncs = watcher.logs.filter((l) => l.msg === 'resync enqueued' && l.time >= t0);
  log(
    `idle ${wall.toFixed(0)} s: watcher CPU ${cpu.toFixed(2)} s (${((100 * cpu) / wall).toFixed(2)} % of one core); ` +
      `Redis ${(redisCmds / wall).toFixed(2)} commands/s (${topRedis}); apiserver ${(apiTotal / wall).toFixed(2)} requests/s (${top}); ` +
      `scaler IsActive polls ${polls - pollsBefore}; ` +
      `pushes ${
        pushes
          .slice(pushesBefore)
          .map((p) => `${p.active ? 'active' : 'inactive'} at +${((p.at - t0) / 1000).toFixed(0)} s`)
          .join(', ') || 'none'
      }; ` +
      `resyncs ${resyncs.length}${resyncs.length > 0 ? ` (objects enqueued: ${resyncs.map((l) => `${String(l['objects'])}${l['full'] ? ' full' : ''}`).join(', ')})` : ''}`,
  );
  // A resync in the window leaves jobs (no worker runs): start the next phase from an empty queue again.
  await queue.drain();
  await waitFor(() => (pushes.at(-1)?.active === false ? true : undefined), { timeoutMs: 10_000, what: 'the scaler to push inactive' });

  // 2. Wake-up latency: App edit sent → "active" pushed.
  const wake: number[] = [];
  const toEnqueue: number[] = [];
  const enqueueToPush: number[] = [];
  for (let i = 0; i < WAKEUPS; i++) {
    const name = names[i % names.length]!;
    const seen = pushes.length;
    const sent = Date.now();
    await rest.patch(appRef(NS, name), { spec: { minReadySeconds: i + 1 } }, PatchType.merge);
    const push = await waitFor(() => pushes.slice(seen).find((p) => p.active), { timeoutMs: 10_000, intervalMs: 1, what: 'an active push' });
    wake.push(push.at - sent);
    const job = (await queue.getJobs(['wait', 'prioritized'])).find((j) => j.data.name === name);
    if (job) {
      toEnqueue.push(job.timestamp - sent);
      enqueueToPush.push(push.at - job.timestamp);
    }
    await queue.drain();
    await waitFor(() => (pushes.at(-1)?.active === false ? true : undefined), { timeoutMs: 10_000, what: 'inactive again' });
  }
  log(`wake-up (App edit sent → scaler pushed active), ms: ${summary(wake)}`);
  log(`  of which edit sent → job enqueued: ${summary(toEnqueue)}; job enqueued → pushed: ${summary(enqueueToPush)}`);

  // 3. Cold start: spawn → first reconcile finished.
  const cold: number[] = [];
  const readyAt: number[] = [];
  for (let i = 0; i < COLD_STARTS; i++) {
    const name = names[i % names.length]!;
    await rest.patch(appRef(NS, name), { spec: { minReadySeconds: 1000 + i } }, PatchType.merge);
    await waitFor(async () => ((await waiting()) > 0 ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 5,
      what: 'a waiting job',
    });
    const spawned = Date.now();
    const worker = spawnEbb('worker', workerEnv, (l) => l.msg === 'reconcile finished' || l.msg === 'worker started', dist);
    procs.push(worker);
    const done = await worker.waitForLog((l) => l.msg === 'reconcile finished', 30_000, 'reconcile finished');
    const started = worker.logs.find((l) => l.msg === 'worker started');
    cold.push(((done['finishedAt'] as number | undefined) ?? done.time) - spawned);
    if (started) readyAt.push(started.time - spawned);
    await worker.stop();
  }
  log(`cold start (spawn → first reconcile finished), ms: ${summary(cold)}; spawn → "worker started": p50 ${quantile(readyAt, 0.5)} ms`);

  log(`load average (1 min): ${loadAtStart.toFixed(2)} → ${(await import('node:os')).loadavg()[0]!.toFixed(2)}`);
} finally {
  for (const c of cleanups) await c();
  await Promise.all(procs.map((p) => p.stop()));
  await cluster.stop();
}
