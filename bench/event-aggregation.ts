/**
 * Event aggregation: how many Event objects and Event requests ebb writes while Apps repeat the same Event,
 * with the worker's correlator (`EBB_EVENT_CORRELATION=on`, the default) and without it (`off`: every Event
 * its own object, as before the correlator).
 *
 * Scenario `quota`: --apps Apps of one replica in a namespace whose ResourceQuota allows no pods. Every
 * reconcile's pod create is refused (403 exceeded quota, an error that heals with time), so the App records a
 * FailedCreate Event and the job is retried with the queue's backoff, capped at --backoff-max to compress
 * time (the default cap is 5m). Each mode gets a fresh namespace and fresh `ebb watcher` / `ebb worker`
 * processes on one private control plane (no nodes: no pod is ever admitted, nothing else writes Events).
 * Requests are `apiserver_request_total` deltas over the window (from the first App created to --seconds
 * later); the benchmark itself writes no Events.
 *
 *   node bench/event-aggregation.ts [--apps 3] [--seconds 90] [--backoff-max 2s] [--modes on,off] [--json out.json]
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { appRef } from '../src/api/group.ts';
import { sleep, waitFor } from '../src/common/wait.ts';
import { core } from '../src/kube/paths.ts';
import type { KubeRest } from '../src/kube/rest.ts';
import { DEFAULT_BIN_DIR } from '../harness/sandbox/paths.ts';
import { benchEbbEnv } from './lib/ebb-env.ts';
import { table } from './lib/report.ts';
import { diff, readApiserverRequests, type Counts } from './lib/requests.ts';
import { createNamespace, inParallel, podlessApp, spawnEbb, startBenchCluster, type BenchCluster } from './watcher-lib.ts';

const { values: opt } = parseArgs({
  options: {
    apps: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '90' },
    'backoff-max': { type: 'string', default: '2s' },
    modes: { type: 'string', default: 'on,off' },
    json: { type: 'string' },
  },
});
const APPS = Number(opt.apps);
const SECONDS = Number(opt.seconds);
const MODES = opt.modes.split(',').filter((m): m is 'on' | 'off' => m === 'on' || m === 'off');
const EVENTS = { group: 'events.k8s.io', version: 'v1', resource: 'events' };

interface EventItem {
  reason?: string;
  note?: string;
  series?: { count: number };
}

export interface ModeResult {
  mode: 'on' | 'off';
  apps: number;
  seconds: number;
  /** FailedCreate Events the reconciles recorded (the worker's "reconcile action failed" lines). */
  recorded: number;
  objects: number;
  /** Σ series.count (1 for an Event without a series): the occurrences a reader of the objects can tell. */
  countShown: number;
  posts: number;
  patches: number;
  /** Rows of `kubectl get events`. */
  kubectlLines: number;
  /** `kubectl events`: the same rows, with each series' count. */
  kubectl: string;
  load: [number, number];
}

const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);
const load1 = (): number => Math.round(loadavg()[0]! * 100) / 100;

async function quotaNamespace(rest: KubeRest, ns: string): Promise<void> {
  await createNamespace(rest, ns);
  await rest.create(core('resourcequotas', ns), { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-pods' }, spec: { hard: { pods: '0' } } });
  // Until the quota controller has computed its usage, admission refuses with another message: wait for it.
  await waitFor(
    async () =>
      (await rest.get<{ status?: { used?: { pods?: string } } }>(core('resourcequotas', ns, 'no-pods'))).status?.used?.pods !== undefined ? true : undefined,
    { timeoutMs: 60_000, intervalMs: 250, what: `quota of ${ns} computed` },
  );
}

/** `kubectl get events` (its table shows no count unless `-o wide`) or `kubectl events` (`(xN over …)` per series). */
async function kubectl(cluster: BenchCluster, ns: string, args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(join(DEFAULT_BIN_DIR, 'kubectl'), ['--kubeconfig', cluster.kubeconfig, '-n', ns, ...args]);
  return stdout;
}

const eventRequests = (c: Counts, verb: string): number => c.get(`${verb} events.k8s.io/events`) ?? 0;

async function runMode(cluster: BenchCluster, mode: 'on' | 'off'): Promise<ModeResult> {
  const ns = `events-${mode}`;
  await quotaNamespace(cluster.rest, ns);
  const env = {
    ...benchEbbEnv(cluster, [ns]),
    EBB_LOG_LEVEL: 'info',
    EBB_EVENT_CORRELATION: mode,
    EBB_QUEUE_BACKOFF_MAX: opt['backoff-max'],
    EBB_QUEUE_ATTEMPTS: '1000',
  };
  const watcher = spawnEbb('watcher', env, () => false);
  const worker = spawnEbb('worker', env, (l) => l.msg === 'reconcile action failed');
  try {
    await worker.waitForLog((l) => l.msg === 'worker started', 60_000, 'worker started');
    await watcher.waitForLog((l) => l.msg === 'watcher started', 60_000, 'watcher started');
    const loadBefore = load1();
    const before = (await readApiserverRequests(cluster.rest)).total;
    const names = Array.from({ length: APPS }, (_, i) => `quota-${i}`);
    await inParallel(names, 8, (n) => cluster.rest.create(appRef(ns), { ...podlessApp(n), spec: { ...(podlessApp(n)['spec'] as object), replicas: 1 } }));
    progress(`${mode}: ${APPS} Apps created; repeating FailedCreate for ${SECONDS} s`);
    await sleep(SECONDS * 1000);
    const window = diff((await readApiserverRequests(cluster.rest)).total, before);
    const recorded = worker.logs.filter((l) => l.msg === 'reconcile action failed').length;
    const loadAfter = load1();
    await Promise.all([worker.stop(), watcher.stop()]);
    const events = (await cluster.rest.list<EventItem>({ ...EVENTS, namespace: ns })).items;
    const rows = (await kubectl(cluster, ns, ['get', 'events', '--no-headers'])).trim().split('\n').filter(Boolean).length;
    const shown = await kubectl(cluster, ns, ['events']);
    return {
      mode,
      apps: APPS,
      seconds: SECONDS,
      recorded,
      objects: events.length,
      countShown: events.reduce((n, e) => n + (e.series?.count ?? 1), 0),
      posts: eventRequests(window, 'POST'),
      patches: eventRequests(window, 'PATCH'),
      kubectlLines: rows,
      kubectl: shown,
      load: [loadBefore, loadAfter],
    };
  } finally {
    await Promise.all([worker.stop(), watcher.stop()]);
  }
}

function report(results: ModeResult[]): string {
  const rows = results.map((r) => {
    const perAppMin = (n: number): string => (n / r.apps / (r.seconds / 60)).toFixed(1);
    return [
      r.mode,
      String(r.recorded),
      String(r.objects),
      String(r.posts),
      String(r.patches),
      `${perAppMin(r.posts + r.patches)}`,
      String(r.countShown),
      String(r.kubectlLines),
      `${r.load[0]} → ${r.load[1]}`,
    ];
  });
  const head = [
    'EBB_EVENT_CORRELATION',
    'FailedCreate recorded',
    'Event objects',
    'POST events',
    'PATCH events',
    'Event requests / App / min',
    'Σ count in objects',
    '`kubectl get events` lines',
    'load 1m',
  ];
  const samples = results.map((r) => `\n${r.mode}: kubectl events (first 4 lines)\n${r.kubectl.split('\n').slice(0, 4).join('\n')}`).join('\n');
  return `${table(head, rows)}\n${samples}\n`;
}

async function main(): Promise<void> {
  progress(
    `load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; starting the control plane`,
  );
  const cluster = await startBenchCluster();
  try {
    const results: ModeResult[] = [];
    for (const mode of MODES) results.push(await runMode(cluster, mode));
    process.stdout.write(
      `quota scenario: ${APPS} Apps × 1 replica, ResourceQuota pods=0, ${SECONDS} s per mode, EBB_QUEUE_BACKOFF_MAX=${opt['backoff-max']}\n${report(results)}`,
    );
    if (opt.json) await writeFile(opt.json, JSON.stringify(results, null, 2));
  } finally {
    await cluster.stop();
  }
}

await main();
