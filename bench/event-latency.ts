/**
 * Watch event → reconcile start latency with warm workers.
 *
 *   node bench/event-latency.ts [--apps 200] [--rate 200] [--seconds 30] [--warmup 5] [--concurrency 8] [--reconcile app|minimal]
 *
 * A private control plane and Redis; `ebb watcher` and one `ebb worker` (debug logs) as real processes; N Apps
 * (no pods) reconciled once so the worker is warm. Then spec edits at a fixed open-loop rate (round robin over
 * the Apps, so each App is edited every N/rate seconds) for the measured window. Every edit is timestamped
 * when its PATCH is sent; the worker's `reconcile started` log gives `enqueuedAt` (the job's creation, i.e.
 * when the watcher enqueued it) and `startedAt`. An edit's reconcile is the App's first run that starts after
 * the edit was sent. `--reconcile minimal` runs the worker shell with the minimal reconcile (read the App,
 * write status.observedGeneration; bench/minimal-worker.ts) to measure the pipeline without the cost of the
 * full App reconcile. Reported (ms):
 *   - edit sent → reconcile started: apiserver write + watch delivery + watcher enqueue + queue wait;
 *   - edit sent → enqueued: apiserver write + watch delivery + watcher enqueue;
 *   - enqueued → started, over every run in the window (edits' runs and the runs of the status writes'
 *     own events), which is what `ebb_event_to_reconcile_seconds` measures.
 */
import { parseArgs } from 'node:util';
import { appRef } from '../src/api/group.ts';
import { sleep, waitFor } from '../src/common/wait.ts';
import { PatchType, type KubeRest } from '../src/kube/rest.ts';
import { availableParallelism, loadavg } from 'node:os';
import { cpuMeter, createNamespace, inParallel, podlessApp, metric, spawnEbb, startBenchCluster, summary, type LogLine } from './watcher-lib.ts';
import { errorMessage } from '../src/common/errors.ts';

const { values: args } = parseArgs({
  options: {
    apps: { type: 'string', default: '200' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '8' },
    reconcile: { type: 'string', default: 'app' },
  },
});
const APPS = Number(args.apps);
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const WARMUP = Number(args.warmup);
const NS = 'bench-latency';

interface Edit {
  app: string;
  sentAt: number;
  measured: boolean;
  failed?: string;
}

interface Run {
  app: string;
  enqueuedAt: number;
  startedAt: number;
}

async function allObserved(rest: KubeRest): Promise<true | undefined> {
  const list = await rest.list<{ metadata: { generation?: number }; status?: { observedGeneration?: number } }>(appRef(NS));
  return list.items.length === APPS && list.items.every((a) => a.status?.observedGeneration === a.metadata.generation) ? true : undefined;
}

/** Open loop: edit i is sent at t0 + i/rate whatever the previous edits' latency. */
async function drive(rest: KubeRest, names: string[], phase: { seconds: number; measured: boolean }, state: { edits: Edit[]; n: number }): Promise<number> {
  const { seconds, measured } = phase;
  const { edits } = state;
  const t0 = Date.now();
  const total = Math.round(seconds * RATE);
  const inflight = new Set<Promise<unknown>>();
  let maxInflight = 0;
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    if (due > Date.now()) await sleep(due - Date.now());
    const name = names[state.n % names.length]!;
    const edit: Edit = { app: name, sentAt: Date.now(), measured };
    edits.push(edit);
    const p = rest
      .patch(appRef(NS, name), { spec: { minReadySeconds: ++state.n } }, PatchType.merge)
      .catch((err: unknown) => {
        edit.failed = errorMessage(err);
      })
      .finally(() => inflight.delete(p));
    inflight.add(p);
    maxInflight = Math.max(maxInflight, inflight.size);
  }
  await Promise.all(inflight);
  return maxInflight;
}

function runsOf(logs: LogLine[]): Map<string, Run[]> {
  const by = new Map<string, Run[]>();
  for (const l of logs) {
    if (l.msg !== 'reconcile started' || l['attempt'] !== 1) continue;
    const run: Run = { app: l['name'] as string, enqueuedAt: l['enqueuedAt'] as number, startedAt: l['startedAt'] as number };
    by.set(run.app, [...(by.get(run.app) ?? []), run]);
  }
  for (const list of by.values()) list.sort((a, b) => a.startedAt - b.startedAt);
  return by;
}

async function main(): Promise<void> {
  const cluster = await startBenchCluster();
  try {
    const { rest } = cluster;
    await createNamespace(rest, NS);
    const names = Array.from({ length: APPS }, (_, i) => `app-${i}`);
    await inParallel(names, 16, (n) => rest.create(appRef(NS), podlessApp(n)));
    const env = { KUBECONFIG: cluster.kubeconfig, EBB_REDIS_URL: cluster.redisUrl, EBB_NAMESPACES: NS, EBB_RESYNC_PERIOD: '0' };
    const watcher = spawnEbb('watcher', env, () => false);
    const worker = spawnEbb(
      args.reconcile === 'minimal' ? 'minimal-worker' : 'worker',
      { ...env, EBB_LOG_LEVEL: 'debug', EBB_WORKER_CONCURRENCY: args.concurrency },
      (l) => l.msg === 'reconcile started' || l.msg === 'reconcile finished',
    );
    const started = await worker.waitForLog((l) => l.msg === 'worker started', 30_000, 'worker started');
    await waitFor(() => allObserved(rest), { timeoutMs: 120_000, intervalMs: 250, what: 'every App observed (warm-up)' });

    const state = { edits: [] as Edit[], n: 0 };
    const { edits } = state;
    await drive(rest, names, { seconds: WARMUP, measured: false }, state);
    const cpu = await cpuMeter({ ...cluster.pids, watcher: watcher.pid, worker: worker.pid, 'bench driver': process.pid });
    const windowStart = Date.now();
    const maxInflight = await drive(rest, names, { seconds: SECONDS, measured: true }, state);
    const windowEnd = Date.now();
    const used = await cpu();
    const load = loadavg()[0] ?? 0;
    await waitFor(() => allObserved(rest), { timeoutMs: 120_000, intervalMs: 250, what: 'every App observed (end)' });
    const metrics = await (await fetch(`http://127.0.0.1:${started['port'] as number}/metrics`)).text();
    const watcherStarted = await watcher.waitForLog((l) => l.msg === 'watcher started', 1_000, 'watcher started');
    const watcherMetrics = await (await fetch(`http://127.0.0.1:${watcherStarted['port'] as number}/metrics`)).text();
    await Promise.all([watcher.stop(), worker.stop()]);

    const runs = runsOf(worker.logs);
    const endToEnd: number[] = [];
    const toEnqueue: number[] = [];
    let unmatched = 0;
    const failed = edits.filter((x) => x.failed);
    for (const e of edits.filter((x) => x.measured && !x.failed)) {
      const run = runs.get(e.app)?.find((r) => r.startedAt >= e.sentAt);
      if (!run) {
        unmatched++;
        continue;
      }
      endToEnd.push(run.startedAt - e.sentAt);
      if (run.enqueuedAt >= e.sentAt) toEnqueue.push(run.enqueuedAt - e.sentAt);
    }
    const queueWait = [...runs.values()]
      .flat()
      .filter((r) => r.startedAt >= windowStart && r.startedAt <= windowEnd)
      .map((r) => r.startedAt - r.enqueuedAt);
    const measuredEdits = edits.filter((x) => x.measured).length;
    const durations = worker.logs
      .filter((l) => l.msg === 'reconcile finished' && (l['startedAt'] as number) >= windowStart && (l['startedAt'] as number) <= windowEnd)
      .map((l) => l['ms'] as number);
    const watchEvents = metric(watcherMetrics, 'ebb_watch_events_total');
    const out = [
      `apps=${APPS} rate=${RATE}/s window=${SECONDS}s edits=${measuredEdits} (achieved ${(measuredEdits / ((windowEnd - windowStart) / 1000)).toFixed(1)}/s, max in flight ${maxInflight}) worker concurrency=${args.concurrency} reconcile=${args.reconcile}`,
      `failed edits=${failed.length}${failed[0] ? ` (first: ${failed[0].failed})` : ''}`,
      `runs in window=${queueWait.length} (${(queueWait.length / SECONDS).toFixed(1)}/s); edits without a later run: ${unmatched}`,
      `edit sent -> reconcile started (ms): ${summary(endToEnd)}`,
      `edit sent -> enqueued (ms):          ${summary(toEnqueue)}`,
      `enqueued -> started, all runs (ms):  ${summary(queueWait)}`,
      `reconcile duration (ms):             ${summary(durations)}`,
      `watch events seen by the watcher (whole run, warm-up included): ${watchEvents}`,
      `CPU used in the window (s of ${((availableParallelism() * (windowEnd - windowStart)) / 1000).toFixed(0)} on ${availableParallelism()} CPUs): ${Object.entries(
        used,
      )
        .map(([n, v]) => `${n}=${v.toFixed(1)}`)
        .join(' ')}; 1-min load average at the end ${load.toFixed(2)}`,
      `worker ebb_event_to_reconcile_seconds: count=${metric(metrics, 'ebb_event_to_reconcile_seconds_count')} mean=${((1000 * metric(metrics, 'ebb_event_to_reconcile_seconds_sum')) / metric(metrics, 'ebb_event_to_reconcile_seconds_count')).toFixed(1)} ms`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await cluster.stop();
  }
}

await main();
