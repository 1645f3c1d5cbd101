/**
 * Helpers for the watcher/worker integration tests: the real `ebb watcher` / `ebb worker` processes with
 * their JSON logs captured, a TCP proxy that can pause, reset, slow down or redirect connections (fault
 * injection between ebb and the apiserver), and
 * App helpers (create, edit, wait until every App's latest generation is observed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { onTestFailed } from 'vitest';
import { parse, stringify } from 'yaml';
import { API_VERSION, APP_KIND, appRef } from '../../../src/api/group.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../../src/kube/rest.ts';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';

const CLI = join(PROJECT_ROOT, 'src', 'cli', 'main.ts');

// ---------------------------------------------------------------------------------------------------------
// ebb processes

/** One pino JSON log line. */
export interface LogLine {
  level: number;
  time: number;
  msg: string;
  [field: string]: unknown;
}

export interface EbbProcess {
  readonly name: string;
  readonly pid: number;
  /** Parsed JSON log lines (stdout), in order. */
  readonly logs: LogLine[];
  /** Everything written to stderr. */
  stderr(): string;
  /** Non-JSON stdout lines. */
  rawStdout(): string[];
  /** Resolves with the exit code (null when killed by a signal) and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
  /** The first log line (already seen or future) matching `pred`. */
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number, what?: string): Promise<LogLine>;
  /** The ops HTTP port, read from the `watcher started` / `worker started` / `daemon started` log line. */
  httpPort(timeoutMs?: number): Promise<number>;
  /** SIGTERM by PID, SIGKILL after `timeoutMs`; resolves when the process is gone. Idempotent. */
  stop(timeoutMs?: number): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

/** The environment of a spawned ebb: this process's, minus any ebb setting, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('EBB_') || k === 'KUBECONFIG' || k === 'NODE_OPTIONS' || k.startsWith('VITEST')) continue;
    base[k] = v;
  }
  return { ...base, EBB_HTTP_ADDRESS: '127.0.0.1', EBB_HTTP_PORT: '0', EBB_SCALER_PORT: '0', ...env };
}

/** Starts `node src/cli/main.ts <command>` with `env`; its stdout JSON logs are parsed as they arrive. */
export function spawnEbb(command: 'watcher' | 'worker' | 'daemon', env: Record<string, string>, name: string = command): EbbProcess {
  const proc = spawn(process.execPath, [CLI, command], { cwd: PROJECT_ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  if (proc.pid === undefined) throw new Error(`${name}: could not spawn ${CLI}`);
  live.add(proc);
  const logs: LogLine[] = [];
  const raw: string[] = [];
  let stderr = '';
  let partial = '';
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      let parsed: LogLine | undefined;
      try {
        parsed = JSON.parse(line) as LogLine;
      } catch {
        raw.push(line);
        continue;
      }
      logs.push(parsed);
    }
  });
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      live.delete(proc);
      resolve({ code, signal });
    });
  });
  let stopping: Promise<void> | undefined;
  const running = (): boolean => proc.exitCode === null && proc.signalCode === null;
  const self: EbbProcess = {
    name,
    pid: proc.pid,
    logs,
    stderr: () => stderr,
    rawStdout: () => raw,
    exited,
    running,
    waitForLog: async (pred, timeoutMs = 120_000, what = 'a log line') => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = logs.find(pred);
        if (found) return found;
        const why = !running() ? 'exited' : Date.now() > deadline ? `timed out after ${timeoutMs} ms` : undefined;
        if (why) throw new Error(`${name} ${why} waiting for ${what}; stderr: ${stderr.slice(-2000)}`);
        await sleep(25);
      }
    },
    httpPort: async (timeoutMs = 120_000) => {
      const line = await self.waitForLog((l) => l.msg === `${command} started`, timeoutMs, `"${command} started"`);
      return line['port'] as number;
    },
    stop: (timeoutMs = 10_000) => {
      stopping ??= (async () => {
        if (!running()) return;
        process.kill(proc.pid!, 'SIGTERM');
        const timer = setTimeout(() => {
          if (running()) process.kill(proc.pid!, 'SIGKILL');
        }, timeoutMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
  return self;
}

/** When the current test fails, prints the last log lines and stderr of each process (for diagnosis). */
export function printLogsOnFailure(procs: readonly EbbProcess[], lines = 25): void {
  onTestFailed(() => {
    for (const p of procs) {
      const tail = p.logs.slice(-lines).map((l) => JSON.stringify(l).slice(0, 400));
      process.stdout.write(`--- ${p.name} (pid ${p.pid}, running ${p.running()}) last ${tail.length} log lines:\n${tail.join('\n')}\n`);
      if (p.stderr()) process.stdout.write(`--- ${p.name} stderr:\n${p.stderr().slice(-3000)}\n`);
    }
  });
}

/** Settings every test process shares: its own queue prefix and namespaces, quick retries. */
export function ebbEnv(
  opts: { kubeconfig: string; redisUrl: string; prefix: string; namespaces: string[] },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    KUBECONFIG: opts.kubeconfig,
    EBB_REDIS_URL: opts.redisUrl,
    EBB_QUEUE_PREFIX: opts.prefix,
    EBB_NAMESPACES: opts.namespaces.join(','),
    EBB_QUEUE_BACKOFF_BASE: '200ms',
    EBB_QUEUE_BACKOFF_MAX: '2s',
    EBB_BOARD: 'false',
    ...extra,
  };
}

/** A fresh BullMQ prefix with a hash tag, so tests never share queues. */
export function uniquePrefix(tag = 't'): string {
  return `{${tag}-${randomBytes(4).toString('hex')}}`;
}

export async function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.text() };
}

/** Sum of a Prometheus series' samples whose labels include every pair in `labels`. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const match = /^[^{\s]+(?:\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const have = new Map([...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m): [string, string] => [m[1] ?? '', m[2] ?? '']));
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) sum += Number(match[2]);
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------------------
// Reconcile runs from worker logs

export interface Run {
  worker: string;
  namespace: string;
  name: string;
  jobId: string;
  attempt: number;
  startedAt: number;
  finishedAt: number;
  /** The generation this run wrote to status.observedGeneration, when it wrote one. */
  observed: number | undefined;
  failed: boolean;
}

/** Pairs `reconcile started` with `reconcile finished` (or `reconcile failed`) per job attempt. */
export function reconcileRuns(proc: Pick<EbbProcess, 'name' | 'logs'>): Run[] {
  const open = new Map<string, Run>();
  const runs: Run[] = [];
  for (const l of proc.logs) {
    const id = `${String(l['jobId'])}#${String(l['attempt'])}`;
    if (l.msg === 'reconcile started') {
      open.set(id, {
        worker: proc.name,
        namespace: l['namespace'] as string,
        name: l['name'] as string,
        jobId: String(l['jobId']),
        attempt: l['attempt'] as number,
        startedAt: l['startedAt'] as number,
        finishedAt: Number.NaN,
        observed: undefined,
        failed: false,
      });
    } else if (l.msg === 'observed generation') {
      const run = open.get(id);
      if (run) run.observed = l['generation'] as number;
    } else if (l.msg === 'reconcile finished' || l.msg === 'reconcile failed') {
      const run = open.get(id);
      if (!run) continue;
      open.delete(id);
      run.finishedAt = l.msg === 'reconcile finished' ? (l['finishedAt'] as number) : l.time;
      run.failed = l.msg === 'reconcile failed';
      runs.push(run);
    }
  }
  return runs;
}

/** Runs grouped by `namespace/name`, each list sorted by start. */
export function runsByApp(runs: Run[]): Map<string, Run[]> {
  const by = new Map<string, Run[]>();
  for (const r of runs) {
    const k = `${r.namespace}/${r.name}`;
    by.set(k, [...(by.get(k) ?? []), r]);
  }
  for (const list of by.values()) list.sort((a, b) => a.startedAt - b.startedAt);
  return by;
}

/** Pairs of runs of one App that overlap in time (must be empty). */
export function overlappingRuns(runs: Run[]): string[] {
  const problems: string[] = [];
  for (const [app, list] of runsByApp(runs)) {
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1]!;
      const cur = list[i]!;
      if (cur.startedAt < prev.finishedAt) {
        problems.push(
          `${app}: ${cur.worker} job ${cur.jobId} started at ${cur.startedAt} before ${prev.worker} job ${prev.jobId} finished at ${prev.finishedAt}`,
        );
      }
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------
// Apps

export function appManifest(name: string): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: { name },
    // No pods: the tests here are about the watch → queue → worker loop, not about rolling pods.
    spec: {
      replicas: 0,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'registry.example.com/web:1.0.0' }] },
      },
    },
  };
}

export interface AppState {
  name: string;
  generation: number;
  observedGeneration: number | undefined;
}

interface AppObj {
  metadata: { name: string; generation?: number; resourceVersion: string };
  status?: { observedGeneration?: number };
}

export async function createApps(rest: KubeRest, namespace: string, names: string[], parallel = 16): Promise<void> {
  for (let i = 0; i < names.length; i += parallel) {
    await Promise.all(names.slice(i, i + parallel).map((n) => rest.create(appRef(namespace), appManifest(n))));
  }
}

export function appNames(count: number, prefix = 'app'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
}

let editCounter = 0;

/**
 * A spec change that bumps `metadata.generation` without touching the pod template (minReadySeconds gets a
 * value no earlier edit used), so whichever App reconcile runs has no pods to roll. Returns the new generation.
 */
export async function editApp(rest: KubeRest, namespace: string, name: string, signal?: AbortSignal): Promise<number> {
  const patch = { spec: { minReadySeconds: ++editCounter } };
  const app = await rest.patch<AppObj>(appRef(namespace, name), patch, PatchType.merge, {}, signal);
  return app.metadata.generation ?? 0;
}

export async function listApps(rest: KubeRest, namespace: string): Promise<{ apps: AppState[]; resourceVersion: string }> {
  const list = await rest.list<AppObj>(appRef(namespace));
  return {
    resourceVersion: list.metadata.resourceVersion,
    apps: list.items.map((a) => ({ name: a.metadata.name, generation: a.metadata.generation ?? 0, observedGeneration: a.status?.observedGeneration })),
  };
}

/** Waits until `expected` Apps exist and each has status.observedGeneration == metadata.generation. */
export async function waitAllObserved(rest: KubeRest, namespace: string, expected: number, timeoutMs = 30_000): Promise<AppState[]> {
  let last: string[] = [];
  try {
    return await waitFor(
      async () => {
        const { apps } = await listApps(rest, namespace);
        last = apps.filter((a) => a.observedGeneration !== a.generation).map((a) => `${a.name} ${a.generation}/${a.observedGeneration ?? '-'}`);
        if (apps.length < expected) last.push(`only ${apps.length} of ${expected} Apps exist`);
        return last.length === 0 ? apps : undefined;
      },
      { timeoutMs, intervalMs: 200, what: `every App in ${namespace} observed` },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; not observed: ${last.slice(0, 20).join(', ')}`);
  }
}

/** Deletes a namespace and does not wait for it to go (the namespace controller finishes it). */
export async function deleteNamespace(rest: KubeRest, namespace: string): Promise<void> {
  await rest.delete(core('namespaces', namespace)).catch(() => undefined);
}

/** Retries `fn` until it succeeds (the apiserver may be restarting); gives up after `timeoutMs`. */
export async function retrying<T>(fn: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// TCP proxy

export interface TcpProxy {
  port: number;
  /** Where new connections go; undefined refuses them (connection reset at once). */
  setTarget(target: { host: string; port: number } | undefined): void;
  /** Stops forwarding bytes in both directions (connections stay open, as on a network partition). */
  pause(): void;
  resume(): void;
  /** Resets (RST) every open connection. */
  resetAll(): number;
  /** Connections accepted so far. */
  accepted(): number;
  open(): number;
  stop(): Promise<void>;
}

/**
 * A byte-level TCP proxy on 127.0.0.1 (TLS passes through untouched, so a kubeconfig whose server is the
 * proxy works as long as the certificate's SANs include 127.0.0.1). `delayMs` adds latency to every chunk in
 * both directions (no backpressure then: for small request/response traffic only).
 */
export async function startTcpProxy(initial?: { host: string; port: number }, opts: { delayMs?: number } = {}): Promise<TcpProxy> {
  let target = initial;
  const delayMs = opts.delayMs ?? 0;
  let paused = false;
  let accepted = 0;
  const pairs = new Set<[Socket, Socket]>();
  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      // Added latency: timers of one duration fire in the order they were set, so bytes stay in order.
      if (delayMs > 0) setTimeout(() => to.destroyed || to.write(chunk), delayMs);
      else if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (!paused) from.resume();
    });
    from.on('end', () => (delayMs > 0 ? setTimeout(() => to.end(), delayMs) : to.end()));
  };
  const server: Server = createServer((client) => {
    accepted++;
    if (!target) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(target);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const close = (): void => {
      pairs.delete(pair);
      if (!client.destroyed) client.destroy();
      if (!upstream.destroyed) upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    forward(client, upstream);
    forward(upstream, client);
    if (paused) {
      client.pause();
      upstream.pause();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    setTarget: (t) => (target = t),
    pause: () => {
      paused = true;
      for (const [a, b] of pairs) {
        a.pause();
        b.pause();
      }
    },
    resume: () => {
      paused = false;
      for (const [a, b] of pairs) {
        a.resume();
        b.resume();
      }
    },
    resetAll: () => {
      const n = pairs.size;
      for (const [a, b] of [...pairs]) {
        a.resetAndDestroy();
        b.resetAndDestroy();
      }
      return n;
    },
    accepted: () => accepted,
    open: () => pairs.size,
    stop: async () => {
      for (const [a, b] of [...pairs]) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `host:port` of the server in a kubeconfig. */
export async function kubeconfigServer(path: string): Promise<{ host: string; port: number; url: string }> {
  const doc = parse(await readFile(path, 'utf8')) as { clusters: { cluster: { server: string } }[] };
  const url = doc.clusters[0]!.cluster.server;
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 443), url };
}

/** Writes a copy of a kubeconfig whose server is `https://127.0.0.1:<port>` (the proxy). */
export async function proxiedKubeconfig(source: string, dest: string, port: number): Promise<string> {
  const doc = parse(await readFile(source, 'utf8')) as { clusters: { cluster: { server: string } }[] };
  for (const c of doc.clusters) c.cluster.server = `https://127.0.0.1:${port}`;
  await writeFile(dest, stringify(doc), { mode: 0o600 });
  return dest;
}
