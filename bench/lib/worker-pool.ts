/**
 * `ebb worker` processes started and stopped as KEDA would scale the worker Deployment: every `intervalMs` the
 * loop asks the watcher's external scaler for its metric (GetMetrics, the backlog KEDA's HPA reads) and runs
 * as many workers as the planner (keda-scale.ts) says; an "active" pushed on StreamIsActive wakes it at once,
 * as it wakes KEDA. A stopped worker gets SIGTERM and finishes its running reconciles.
 *
 * Measurement windows sum over every worker that ran in them: CPU is exact (live workers from /proc/<pid>/stat,
 * workers reaped inside the window from this process's cutime + cstime), RSS is the sum over the live workers
 * sampled every tick, reconciles are each worker's counter (read once more before it is stopped; reconciles
 * that finish while it drains are not counted).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { credentials, loadPackageDefinition, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { sleep } from '../../src/common/wait.ts';
import { PROJECT_ROOT } from '../../harness/sandbox/paths.ts';
import type { BenchProcess } from '../watcher-lib.ts';
import { readEbbWorker } from './ebb-metrics.ts';

export interface PoolWindow {
  /** CPU-seconds of all workers over the window. */
  cpu: number;
  /** Σ RSS of the live workers at the end, and the largest such sum sampled in the window (MiB). */
  rssEnd: number;
  rssMax: number;
  /** Most workers running (not stopping) at once, and at the end. */
  maxWorkers: number;
  endWorkers: number;
  started: number;
  stopped: number;
  reconciles: number;
}

export interface WorkerPool {
  /** Opens a measurement window; `end()` closes it. */
  window(): Promise<{ end(): Promise<PoolWindow> }>;
  /** Workers running (not stopping). */
  running(): number;
  close(): Promise<void>;
}

export interface PoolOptions {
  /** The watcher's scaler port; undefined: no backlog is read (a fixed planner). */
  scalerPort: number | undefined;
  spawn: () => BenchProcess;
  planner: { next(now: number, backlog: number, current: number): number };
  intervalMs: number;
  progress: (msg: string) => void;
  /** The ScaledObject's `jobsPerWorker`, sent with every scaler call as KEDA sends its trigger metadata. */
  jobsPerWorker?: number | undefined;
  /** The ScaledObject's `threadBacklog` (the backlog left to the watcher's worker thread); undefined: not sent. */
  threadBacklog?: number | undefined;
}

interface Worker {
  proc: BenchProcess;
  port?: number;
  exited: boolean;
  stopping: boolean;
}

interface ScalerClient extends Client {
  GetMetrics(req: object, opts: { deadline: number }, cb: (err: ServiceError | null, res?: { metricValues: { metricValue: number }[] }) => void): void;
  StreamIsActive(req: object): ClientReadableStream<{ result: boolean }>;
}

/** What the ScaledObject sends with every call. */
const scaledObjectRef = (jobsPerWorker = 50, threadBacklog?: number): object => ({
  name: 'ebb-worker',
  namespace: 'ebb-system',
  scalerMetadata: { jobsPerWorker: String(jobsPerWorker), ...(threadBacklog === undefined ? {} : { threadBacklog: String(threadBacklog) }) },
});

function scalerClient(port: number): ScalerClient {
  const def = loadSync(join(PROJECT_ROOT, 'src', 'watcher', 'externalscaler.proto'), { keepCase: true, longs: Number, defaults: true });
  type Ctor = new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => ScalerClient;
  const pkg = loadPackageDefinition(def) as unknown as { externalscaler: { ExternalScaler: Ctor } };
  return new pkg.externalscaler.ExternalScaler(`127.0.0.1:${port}`, credentials.createInsecure());
}

/** user + system seconds from a /proc stat line: the process's own (13, 14) or its reaped children's (15, 16). */
function statSeconds(text: string, children: boolean): number {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [u, s] = children ? [13, 14] : [11, 12];
  return (Number(fields[u]) + Number(fields[s])) / 100;
}

const readSync = (path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

function rssMiB(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readSync(`/proc/${pid}/status`))?.[1] ?? 0);
  return kb / 1024;
}

export function startWorkerPool(opts: PoolOptions): WorkerPool {
  const workers: Worker[] = [];
  const windows = new Set<{ rssMax: number; maxWorkers: number; started: number; stopped: number }>();
  let banked = 0;
  let closed = false;
  let wake: (() => void) | undefined;
  const client = opts.scalerPort === undefined ? undefined : scalerClient(opts.scalerPort);
  const SO_REF = scaledObjectRef(opts.jobsPerWorker, opts.threadBacklog);
  const stream = client?.StreamIsActive(SO_REF);
  stream?.on('data', (m: { result: boolean }) => void (m.result && wake?.()));
  stream?.on('error', () => undefined);

  const running = (): Worker[] => workers.filter((w) => !w.stopping && !w.exited);
  const backlog = (): Promise<number | undefined> =>
    new Promise((resolve) => {
      if (!client) return resolve(0);
      client.GetMetrics({ scaledObjectRef: SO_REF, metricName: '' }, { deadline: Date.now() + 2_000 }, (err, res) =>
        resolve(err ? undefined : Number(res?.metricValues[0]?.metricValue ?? 0)),
      );
    });
  const reconcilesOf = async (w: Worker): Promise<number> =>
    w.port === undefined || w.exited ? 0 : (await readEbbWorker(w.port).catch(() => ({ reconciles: 0 }))).reconciles;

  const start = (): void => {
    const t0 = Date.now();
    const w: Worker = { proc: opts.spawn(), exited: false, stopping: false };
    workers.push(w);
    void w.proc.exited.then(() => (w.exited = true));
    w.proc
      .waitForLog((l) => l.msg === 'worker started', 120_000, 'worker started')
      .then((l) => {
        w.port = Number(l['port']);
        opts.progress(`worker ${w.proc.pid} started in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      })
      .catch(() => undefined);
    for (const win of windows) win.started++;
  };
  const stop = async (w: Worker): Promise<void> => {
    w.stopping = true;
    banked += await reconcilesOf(w);
    for (const win of windows) win.stopped++;
    void w.proc.stop();
  };
  const sample = (): void => {
    const rss = workers.filter((w) => !w.exited).reduce((a, w) => a + rssMiB(w.proc.pid), 0);
    const n = running().length;
    for (const win of windows) {
      win.rssMax = Math.max(win.rssMax, rss);
      win.maxWorkers = Math.max(win.maxWorkers, n);
    }
  };
  const tick = async (): Promise<void> => {
    const b = await backlog();
    const live = running();
    if (b !== undefined) {
      const want = opts.planner.next(Date.now(), b, live.length);
      if (want !== live.length) opts.progress(`workers ${live.length} → ${want} (backlog ${b})`);
      for (let i = live.length; i < want; i++) start();
      for (const w of live.slice(want).reverse()) await stop(w);
    }
    sample();
  };
  const loop = (async () => {
    while (!closed) {
      await tick().catch((err: unknown) => opts.progress(`worker scaler: ${String(err)}`));
      await new Promise<void>((resolve) => {
        wake = resolve;
        void sleep(opts.intervalMs).then(resolve);
      });
    }
  })();

  /** Synchronous, so no worker is reaped between reading the children's total and the live workers. */
  const cpuNow = (): number =>
    statSeconds(readSync('/proc/self/stat'), true) +
    workers.filter((w) => !w.exited).reduce((a, w) => a + statSeconds(readSync(`/proc/${w.proc.pid}/stat`), false), 0);
  const reconcilesNow = async (): Promise<number> =>
    banked + (await Promise.all(workers.filter((w) => !w.stopping).map(reconcilesOf))).reduce((a, b) => a + b, 0);

  return {
    window: async () => {
      const win = { rssMax: 0, maxWorkers: running().length, started: 0, stopped: 0 };
      windows.add(win);
      const cpu0 = cpuNow();
      const r0 = await reconcilesNow();
      sample();
      return {
        end: async () => {
          sample();
          windows.delete(win);
          const cpu = cpuNow() - cpu0;
          const rssEnd = workers.filter((w) => !w.exited).reduce((a, w) => a + rssMiB(w.proc.pid), 0);
          return { ...win, cpu, rssEnd, endWorkers: running().length, reconciles: (await reconcilesNow()) - r0 };
        },
      };
    },
    running: () => running().length,
    close: async () => {
      closed = true;
      wake?.();
      await loop;
      stream?.cancel();
      client?.close();
      await Promise.all(workers.map((w) => w.proc.stop()));
    },
  };
}
