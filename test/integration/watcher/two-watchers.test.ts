/**
 * Two watcher replicas at once (the Deployment runs 2, without leader election): the same workload run once
 * with one watcher and once with two, each with one worker process. Every App is observed in both runs, and
 * duplicate processing stays within what deduplication allows.
 *
 * The bound, per App: every watch event makes each watcher enqueue once, and every watcher enqueues every
 * App once after its initial list. One enqueue makes at most one job: it merges into the App's waiting job
 * (no new job), or adds a job, or — while the App's job runs — records the one follow-up job
 * (keepLastIfActive), which further enqueues merge into. So with W watchers:
 *     jobs(App) <= W * (watch events of the App + 1).
 * Two watchers can only duplicate work when a worker picks up the job between the two replicas' enqueues of
 * the same event; the test reports how often that happened (jobs with two watchers vs one).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { listWatch } from '../../../src/kube/watch.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  appNames,
  createApps,
  deleteNamespace,
  ebbEnv,
  editApp,
  httpGet,
  metricValue,
  overlappingRuns,
  printLogsOnFailure,
  reconcileRuns,
  spawnEbb,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
  type Run,
} from './helpers.ts';

const APPS = 10;
const EDITS = 60;

interface Outcome {
  jobsByApp: Map<string, number>;
  eventsByApp: Map<string, number>;
  jobs: number;
  events: number;
  merged: number;
  runs: Run[];
}

interface EventCount {
  /** Watch events per App. */
  counts: Map<string, number>;
  /** The resourceVersion of the last event seen per App. */
  lastRv: Map<string, string>;
  /** Resolves once the initial list is in: the watch then sees every later change. */
  listed: Promise<void>;
}

/** Counts the watch events of every App in `ns` as any watcher sees them. */
function countEvents(ns: string, signal: AbortSignal): EventCount {
  const counts = new Map<string, number>();
  const lastRv = new Map<string, string>();
  let onListed: () => void = () => undefined;
  const listed = new Promise<void>((resolve) => (onListed = resolve));
  void listWatch<{ metadata?: { name?: string; resourceVersion?: string } }>(
    { rest: sandbox().rest, ref: appRef(ns), signal },
    {
      onList: () => onListed(),
      onEvent: (ev) => {
        const name = ev.object.metadata?.name ?? '';
        counts.set(name, (counts.get(name) ?? 0) + 1);
        lastRv.set(name, ev.object.metadata?.resourceVersion ?? '');
      },
    },
  ).catch(() => undefined);
  return { counts, lastRv, listed };
}

const BUSY_STATES = ['wait', 'prioritized', 'active', 'delayed'];

/**
 * Waits until the work the edits caused is over: the count has seen every App at its current resourceVersion
 * (the status writes' own events included), and no reconcile job is waiting, running or scheduled.
 */
async function quiet(ns: string, count: EventCount, watcherPort: number): Promise<void> {
  let last = '';
  await waitFor(
    async () => {
      const apps = (await sandbox().rest.list<{ metadata: { name: string; resourceVersion: string } }>(appRef(ns))).items;
      const behind = apps.filter((a) => count.lastRv.get(a.metadata.name) !== a.metadata.resourceVersion).map((a) => a.metadata.name);
      const metrics = (await httpGet(watcherPort, '/metrics')).body;
      const busy = BUSY_STATES.reduce((n, state) => n + metricValue(metrics, 'ebb_queue_jobs', { queue: 'reconcile', state }), 0);
      last = `events not yet counted for [${behind.join(', ')}]; ${busy} reconcile jobs waiting, running or scheduled`;
      return behind.length === 0 && busy === 0 ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: 'the edits and their status writes to be processed' },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}: ${last}`);
  });
}

async function runWorkload(watchers: number, procs: EbbProcess[], namespaces: string[]): Promise<Outcome> {
  const { rest, kubeconfig, redisUrl } = sandbox();
  const ns = await freshNamespace(`w${watchers}`);
  namespaces.push(ns);
  const stopCounting = new AbortController();
  const count = countEvents(ns, stopCounting.signal);
  const eventsByApp = count.counts;
  await count.listed; // the counting watch is established before the first App exists
  const names = appNames(APPS);
  await createApps(rest, ns, names);

  const common = { kubeconfig, redisUrl, prefix: uniquePrefix(`w${watchers}`), namespaces: [ns] };
  const ws = Array.from({ length: watchers }, (_, i) => spawnEbb('watcher', ebbEnv(common, { EBB_RESYNC_PERIOD: '0' }), `watcher-${i}`));
  const worker = spawnEbb('worker', ebbEnv(common, { EBB_WORKER_CONCURRENCY: '8', EBB_LOG_LEVEL: 'debug' }));
  procs.push(...ws, worker);
  const ports = await Promise.all(ws.map((w) => w.httpPort()));
  await worker.httpPort();
  await waitAllObserved(rest, ns, APPS);

  // Edits at a steady pace (one every 20 ms, round robin), so each is a separate watch event.
  for (let n = 0; n < EDITS; n++) {
    await editApp(rest, ns, names[n % APPS]!);
    await sleep(20);
  }
  await waitAllObserved(rest, ns, APPS);
  await quiet(ns, count, ports[0] ?? 0);
  let merged = 0;
  for (const port of ports) merged += metricValue((await httpGet(port, '/metrics')).body, 'ebb_enqueue_total', { outcome: 'merged' });
  stopCounting.abort();
  await Promise.all([...ws, worker].map((p) => p.stop()));

  const runs = reconcileRuns(worker);
  const jobIds = new Map<string, Set<string>>();
  for (const r of runs) jobIds.set(r.name, (jobIds.get(r.name) ?? new Set()).add(r.jobId));
  const jobsByApp = new Map([...jobIds].map(([app, ids]) => [app, ids.size]));
  const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
  return { jobsByApp, eventsByApp, jobs: sum(jobsByApp), events: sum(eventsByApp), merged, runs };
}

describe('two watcher replicas', () => {
  const procs: EbbProcess[] = [];
  const namespaces: string[] = [];

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    for (const ns of namespaces) await deleteNamespace(sandbox().rest, ns);
  });

  it('observes every App and duplicates no more than deduplication allows', async () => {
    printLogsOnFailure(procs);
    const one = await runWorkload(1, procs, namespaces);
    const two = await runWorkload(2, procs, namespaces);

    for (const [label, out, watchers] of [
      ['one watcher', one, 1],
      ['two watchers', two, 2],
    ] as const) {
      expect(out.jobsByApp.size, `${label}: every App was reconciled`).toBe(APPS);
      expect(overlappingRuns(out.runs), label).toEqual([]);
      for (const [app, jobs] of out.jobsByApp) {
        const events = out.eventsByApp.get(app) ?? 0;
        expect(jobs, `${label}: ${app} had ${jobs} jobs for ${events} events`).toBeLessThanOrEqual(watchers * (events + 1));
      }
    }
    // Both replicas enqueue every event; deduplication absorbed the second enqueue at least sometimes.
    expect(two.merged, 'enqueues merged into an existing job with two watchers').toBeGreaterThan(0);
    // Overall, two replicas never double the work of one.
    expect(two.jobs).toBeLessThanOrEqual(2 * one.jobs);
    process.stdout.write(
      `two-watchers: one watcher ${one.jobs} jobs / ${one.events} events (merged ${one.merged}); ` +
        `two watchers ${two.jobs} jobs / ${two.events} events (merged ${two.merged}); ratio ${(two.jobs / one.jobs).toFixed(2)}\n`,
    );
  });
});
