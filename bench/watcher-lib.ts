/**
 * Shared pieces of the watcher benchmarks (event-latency.ts, watcher-memory.ts): a private control plane and
 * Redis in a temporary directory, the real `ebb watcher` / `ebb worker` processes with their JSON logs, and
 * small statistics helpers. Benchmarks are run by hand (see bench/README.md), never as timed tests.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_VERSION, APP_KIND } from '../src/api/group.ts';
import { sleep, waitFor } from '../src/common/wait.ts';
import { createLogger } from '../src/common/log.ts';
import { core } from '../src/kube/paths.ts';
import type { KubeRest } from '../src/kube/rest.ts';
import { startControlPlane } from '../harness/sandbox/control-plane.ts';
import { installCrds } from '../harness/sandbox/crds.ts';
import { CRD_DIR, DEFAULT_BIN_DIR, PROJECT_ROOT } from '../harness/sandbox/paths.ts';
import { startRedis } from '../harness/sandbox/redis.ts';

export interface BenchCluster {
  dir: string;
  /** PIDs of the control-plane processes and Redis, by name (for CPU accounting). */
  pids: Record<string, number>;
  kubeconfig: string;
  redisUrl: string;
  rest: KubeRest;
  stop(): Promise<void>;
}

/** etcd + kube-apiserver + controller-manager (plus `extraControllers`) + scheduler and a Redis, in a temporary directory. */
export async function startBenchCluster(opts: { extraControllers?: string[] } = {}): Promise<BenchCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-bench-'));
  const [cp, redis] = await Promise.all([
    startControlPlane({
      dir,
      binDir: DEFAULT_BIN_DIR,
      log: createLogger('bench', 'warn'),
      ...(opts.extraControllers ? { extraControllers: opts.extraControllers } : {}),
    }),
    startRedis({ dir: join(dir, 'redis') }),
  ]);
  await installCrds(cp.rest, CRD_DIR);
  return {
    dir,
    pids: { ...Object.fromEntries(cp.children.map((c) => [c.name, c.pid])), redis: redis.pid },
    kubeconfig: cp.kubeconfig,
    redisUrl: redis.url,
    rest: cp.rest,
    stop: async () => {
      await redis.stop();
      await cp.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a namespace and waits for its default ServiceAccount (pods are rejected until it exists). */
export async function createNamespace(rest: KubeRest, name: string): Promise<void> {
  await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await waitFor(() => rest.get(core('serviceaccounts', name, 'default')), { timeoutMs: 60_000, what: `ServiceAccount ${name}/default` });
}

/** Runs `fn` over `items` with at most `parallel` calls in flight. */
export async function inParallel<T>(items: readonly T[], parallel: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

export interface LogLine {
  msg: string;
  time: number;
  [field: string]: unknown;
}

export interface BenchProcess {
  pid: number;
  /** Log lines kept (those `keep` accepted). */
  logs: LogLine[];
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs: number, what: string): Promise<LogLine>;
  /** Resolves when the process has exited (and been reaped). */
  exited: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `node src/cli/main.ts <command>` (or dist/cli/main.js, or bench/minimal-worker.ts or bench/queue-worker.ts) with `env` (on top of PATH/HOME) and parses its JSON log lines;
 * only lines `keep` accepts are stored (a worker at debug level writes hundreds per second).
 */
export function spawnEbb(
  command: 'watcher' | 'worker' | 'minimal-worker' | 'queue-worker',
  env: Record<string, string>,
  keep: (l: LogLine) => boolean = () => true,
  opts: { dist?: boolean } = {},
): BenchProcess {
  const base = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' };
  // `dist` runs the compiled JavaScript (`npm run build`), as the container image does: no TypeScript loader.
  const cli = opts.dist ? join(PROJECT_ROOT, 'dist', 'cli', 'main.js') : join(PROJECT_ROOT, 'src', 'cli', 'main.ts');
  const argv = command === 'minimal-worker' || command === 'queue-worker' ? [join(PROJECT_ROOT, 'bench', `${command}.ts`)] : [cli, command];
  const proc = spawn(process.execPath, argv, {
    cwd: PROJECT_ROOT,
    env: { ...base, EBB_HTTP_ADDRESS: '127.0.0.1', EBB_HTTP_PORT: '0', EBB_SCALER_PORT: '0', EBB_BOARD: 'false', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const logs: LogLine[] = [];
  let partial = '';
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        const l = JSON.parse(line) as LogLine;
        if (keep(l) || l.msg.endsWith(' started')) logs.push(l);
      } catch {
        // not a log line
      }
    }
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  process.once('exit', () => proc.kill('SIGKILL'));
  return {
    pid: proc.pid ?? -1,
    logs,
    waitForLog: (pred, timeoutMs, what) => waitFor(() => logs.find(pred), { timeoutMs, intervalMs: 50, what }),
    exited,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** VmRSS and VmHWM (peak) of a process, in MiB, from /proc. */
export async function memoryOf(pid: number): Promise<{ rssMiB: number; peakMiB: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kb('VmRSS') / 1024, peakMiB: kb('VmHWM') / 1024 };
}

/** Samples the RSS of each named process every `everyMs` until `stop`; keeps the maximum seen per name (MiB). */
export function rssSampler(pids: Record<string, number>, everyMs = 250): { max(): Record<string, number>; stop(): void } {
  const max: Record<string, number> = Object.fromEntries(Object.keys(pids).map((name) => [name, 0]));
  let running = true;
  void (async () => {
    while (running) {
      for (const [name, pid] of Object.entries(pids)) {
        max[name] = Math.max(max[name] ?? 0, (await memoryOf(pid).catch(() => ({ rssMiB: 0 }))).rssMiB);
      }
      await sleep(everyMs);
    }
  })();
  return { max: () => ({ ...max }), stop: () => (running = false) };
}

/** CPU time (user + system, seconds) a process has used so far, from /proc/<pid>/stat. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command (which may contain spaces) start after the last ')'; utime and stime are
  // fields 14 and 15, in clock ticks (100 per second on Linux).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds used by each named process between two calls of the returned function. */
export async function cpuMeter(pids: Record<string, number>): Promise<() => Promise<Record<string, number>>> {
  const read = async (): Promise<Record<string, number>> =>
    Object.fromEntries(await Promise.all(Object.entries(pids).map(async ([name, pid]) => [name, await cpuSeconds(pid)] as const)));
  const before = await read();
  return async () => {
    const after = await read();
    return Object.fromEntries(Object.entries(after).map(([name, s]) => [name, s - (before[name] ?? 0)]));
  };
}

/** The q-quantile (0..1) of `values`, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function summary(values: readonly number[]): string {
  const f = (n: number): string => n.toFixed(1);
  return `n=${values.length} p50=${f(quantile(values, 0.5))} p90=${f(quantile(values, 0.9))} p99=${f(quantile(values, 0.99))} max=${f(quantile(values, 1))}`;
}

/** A Prometheus sample value (sum over all label sets of `name`). */
export function metric(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** An App with no pods (`replicas: 0`): what the watcher benchmarks create by the hundred. */
export function podlessApp(name: string): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: { name },
    spec: {
      replicas: 0,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'registry.example.com/web:1' }] } },
    },
  };
}
