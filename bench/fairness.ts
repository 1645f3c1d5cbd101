/**
 * Tenant fairness benchmark: one namespace floods the reconcile queue while another makes single
 * edits; how long does the quiet namespace wait, and does the flood still drain at full speed?
 *
 *   node bench/fairness.ts [--flood 10000] [--edits 50] [--gap 100] [--work 20] [--workers 2] [--concurrency 8]
 *                          [--modes off,namespace,namespace+cap] [--cap 4] [--runs 3]
 *
 * Mode `namespace+cap` is fairness plus the worker's per-namespace cap (EBB_NAMESPACE_CONCURRENCY = `--cap`):
 * the workers run ebb's namespace gate, and a job over the cap goes back to the delayed set as in `ebb worker`.
 *
 * A private `redis-server`; per mode (EBB_QUEUE_FAIRNESS) a fresh key prefix and `--workers` worker processes
 * (this file with `--role worker`: a BullMQ Worker with ebb's reconcile worker options and a minimal reconcile
 * that takes `--work` ms). The producer is ebb's enqueue path as the watcher runs it: `enqueue()` with the
 * priority `TenantRates` gives the namespace, in chunks of 64 in parallel. At t0 namespace A enqueues
 * `--flood` reconciles of distinct Apps at once, while namespace B edits `--edits` Apps one by one,
 * `--gap` ms apart. Reported: B's edit → reconcile start latency (the edit is timestamped just before its
 * enqueue; the start is the worker's clock when the job starts), and A's drain: t0 → A's last job done, as
 * jobs/s. Workers print one JSON line per job; the clocks are the same machine's. The modes alternate, `--runs`
 * times each; the table gives B's latencies over all edits of a mode and A's drain as median (min–max) of
 * its runs, so a load spike on a shared machine shows as a range rather than as a difference.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DelayedError, Worker, type Job } from 'bullmq';
import { sleep, waitFor } from '../src/common/wait.ts';
import { enqueue } from '../src/queue/enqueue.ts';
import { TenantRates, type Fairness } from '../src/queue/fairness.ts';
import { namespaceGate } from '../src/queue/namespace-gate.ts';
import { dedupId, RECONCILE_QUEUE, type ObjectKey } from '../src/queue/names.ts';
import { createReconcileQueue, reconcileWorkerOptions } from '../src/queue/queues.ts';
import { redisConnection } from '../src/queue/connection.ts';
import { parseQueueConfig } from '../src/queue/settings.ts';
import { startRedis } from '../harness/sandbox/redis.ts';
import { quantile } from './watcher-lib.ts';

const { values: opt } = parseArgs({
  options: {
    flood: { type: 'string', default: '10000' },
    edits: { type: 'string', default: '50' },
    gap: { type: 'string', default: '100' },
    work: { type: 'string', default: '20' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
    modes: { type: 'string', default: 'off,namespace' },
    runs: { type: 'string', default: '3' },
    cap: { type: 'string', default: '0' },
    role: { type: 'string', default: 'producer' },
    redis: { type: 'string' },
    prefix: { type: 'string' },
  },
});
const FLOOD = Number(opt.flood);
const EDITS = Number(opt.edits);
const GAP_MS = Number(opt.gap);
const WORK_MS = Number(opt.work);
const CHUNK = 64;

/** One started job, as a worker process reports it. */
interface Started {
  id: string;
  startedAt: number;
  doneAt: number;
}

function queueConfig(url: string, prefix: string, fairness: Fairness) {
  return parseQueueConfig({ EBB_REDIS_URL: url, EBB_QUEUE_PREFIX: prefix, EBB_WORKER_CONCURRENCY: opt.concurrency, EBB_QUEUE_FAIRNESS: fairness });
}

type Mode = Fairness | `${Fairness}+cap`;
const fairnessOf = (mode: Mode): Fairness => (mode.endsWith('+cap') ? (mode.slice(0, -'+cap'.length) as Fairness) : (mode as Fairness));

/** `--role worker`: run jobs until SIGTERM, printing one line per job; with `--cap` > 0, ebb's namespace gate first. */
async function runWorker(url: string, prefix: string): Promise<void> {
  const cfg = queueConfig(url, prefix, 'off');
  const cap = Number(opt.cap);
  const gate =
    cap > 0
      ? namespaceGate(redisConnection(url, { forWorker: false, name: 'bench-gate' }), prefix, {
          cap: { kind: 'count', count: cap },
          leaseMs: 60_000,
          minDelayMs: 500,
        })
      : undefined;
  const worker = new Worker<ObjectKey, void, string>(
    RECONCILE_QUEUE,
    async (job: Job<ObjectKey, void, string>, token?: string) => {
      if (gate && !(await gate.acquire(job.data.namespace, job.id ?? '', Date.now()))) {
        await job.moveToDelayed(Date.now() + gate.retryDelayMs(), token);
        throw new DelayedError();
      }
      const startedAt = Date.now();
      await sleep(WORK_MS);
      await gate?.release(job.data.namespace, job.id ?? '');
      process.stdout.write(`${JSON.stringify({ id: dedupId(job.data), startedAt, doneAt: Date.now() } satisfies Started)}\n`);
    },
    reconcileWorkerOptions(redisConnection(url, { forWorker: true, name: 'bench-fairness-worker' }), cfg),
  );
  await worker.waitUntilReady();
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await worker.close();
  process.exit(0);
}

function spawnWorker(url: string, prefix: string, cap: number, onJob: (s: Started) => void): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(import.meta.url),
      ...['--role', 'worker', '--redis', url, '--prefix', prefix, '--work', String(WORK_MS), '--concurrency', opt.concurrency, '--cap', String(cap)],
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'ready') resolve(child);
      else if (line.startsWith('{')) onJob(JSON.parse(line) as Started);
    });
  });
}

interface Result {
  mode: Mode;
  bLatencies: number[];
  aEnqueueMs: number;
  aDrainMs: number;
}

async function runMode(url: string, mode: Mode, n: number): Promise<Result> {
  const prefix = `{fair${n}}`;
  const fairness = fairnessOf(mode);
  const cap = mode.endsWith('+cap') ? Number(opt.cap) : 0;
  const cfg = queueConfig(url, prefix, fairness);
  const starts = new Map<string, Started>();
  const workers = await Promise.all(Array.from({ length: Number(opt.workers) }, () => spawnWorker(url, prefix, cap, (s) => starts.set(s.id, s))));
  const queue = createReconcileQueue(redisConnection(url, { forWorker: false, name: 'bench-fairness' }), cfg);
  const rates = new TenantRates(fairness);
  const add = (key: ObjectKey) => enqueue(queue, key, { priority: rates.priorityFor(key.namespace) });

  const t0 = Date.now();
  const flood = (async () => {
    const keys = Array.from({ length: FLOOD }, (_, i): ObjectKey => ({ kind: 'App', namespace: 'tenant-a', name: `app-${i}` }));
    for (let i = 0; i < keys.length; i += CHUNK) await Promise.all(keys.slice(i, i + CHUNK).map(add));
    return Date.now() - t0;
  })();
  const edits: { id: string; sentAt: number }[] = [];
  for (let i = 0; i < EDITS; i++) {
    const key: ObjectKey = { kind: 'App', namespace: 'tenant-b', name: `web-${i}` };
    const sentAt = Date.now();
    await add(key);
    edits.push({ id: dedupId(key), sentAt });
    await sleep(GAP_MS);
  }
  const aEnqueueMs = await flood;
  await waitFor(() => Promise.resolve(starts.size === FLOOD + EDITS ? true : undefined), { timeoutMs: 600_000, intervalMs: 100, what: 'every job ran' });
  let aDone = 0;
  for (const [id, s] of starts) if (id.startsWith('App.tenant-a.')) aDone = Math.max(aDone, s.doneAt);
  const bLatencies = edits.map((e) => (starts.get(e.id)?.startedAt ?? NaN) - e.sentAt);

  for (const w of workers) {
    w.removeAllListeners('exit');
    w.kill('SIGTERM');
  }
  await queue.close();
  await sleep(200);
  return { mode, bLatencies, aEnqueueMs, aDrainMs: aDone - t0 };
}

function report(results: Result[]): void {
  const ms = (v: number): string => `${Math.round(v)} ms`;
  const range = (vs: number[], f: (v: number) => string): string => `${f(quantile(vs, 0.5))} (${f(Math.min(...vs))}–${f(Math.max(...vs))})`;
  console.log(
    `\n${FLOOD} reconciles of namespace A enqueued at once; ${EDITS} edits of namespace B, ${GAP_MS} ms apart; ` +
      `${opt.workers} workers x ${opt.concurrency}, ${WORK_MS} ms per reconcile; ${opt.runs} runs per mode\n`,
  );
  console.log(
    `| EBB_QUEUE_FAIRNESS (+cap: EBB_NAMESPACE_CONCURRENCY=${opt.cap}) | B edit → start p50 | B p99 | B max | A enqueue time s | A drain time s | A jobs/s |`,
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const mode of new Set(results.map((r) => r.mode))) {
    const runs = results.filter((r) => r.mode === mode);
    const l = runs.flatMap((r) => r.bLatencies);
    const secs = (v: number): string => (v / 1000).toFixed(1);
    console.log(
      `| ${mode} | ${ms(quantile(l, 0.5))} | ${ms(quantile(l, 0.99))} | ${ms(quantile(l, 1))} | ${range(
        runs.map((r) => r.aEnqueueMs),
        secs,
      )} | ${range(
        runs.map((r) => r.aDrainMs),
        secs,
      )} | ${range(
        runs.map((r) => FLOOD / (r.aDrainMs / 1000)),
        (v) => String(Math.round(v)),
      )} |`,
    );
  }
}

async function main(): Promise<void> {
  if (opt.role === 'worker') return runWorker(opt.redis ?? '', opt.prefix ?? '');
  const dir = await mkdtemp(join(tmpdir(), 'ebb-bench-fairness-'));
  const redis = await startRedis({ dir });
  console.log(
    `[${new Date().toISOString()}] redis ${redis.url}; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  try {
    const results: Result[] = [];
    const modes = opt.modes.split(',') as Mode[];
    let n = 0;
    for (let run = 1; run <= Number(opt.runs); run++) {
      for (const mode of modes) {
        const r = await runMode(redis.url, mode, n++);
        results.push(r);
        console.log(
          `[${new Date().toISOString()}] run ${run} ${mode}: B p99 ${Math.round(quantile(r.bLatencies, 0.99))} ms, A drain ${(r.aDrainMs / 1000).toFixed(1)} s`,
        );
      }
    }
    report(results);
  } finally {
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

await main();
