/**
 * ebb's side of the fleet benchmark: `ebb watcher` (its KEDA scaler on) and the `ebb worker` processes, each with
 * its manifest's NODE_OPTIONS (and the worker's default concurrency, which the manifest leaves unset), the
 * workers either scaled as KEDA would scale them for the watcher's backlog or a fixed number of them.
 */
import type { Sandbox } from '../../harness/sandbox/sandbox.ts';
import { spawnEbb, type BenchProcess } from '../watcher-lib.ts';
import { benchEbbEnv } from './ebb-env.ts';
import { KedaScalePlanner, shippedScaleSpec, type ScaleSpec } from './keda-scale.ts';
import { startWorkerPool, type WorkerPool } from './worker-pool.ts';

/** How the workers are run: scaled as KEDA would (the shipped ScaledObject's numbers) or a fixed count. */
export type WorkerMode = { mode: 'keda'; spec: ScaleSpec; intervalMs: number } | { mode: 'fixed'; count: number };

export interface EbbProcesses {
  watcher: BenchProcess;
  /** The watcher's ops port (its /metrics). */
  watcherPort: number | undefined;
  pool: WorkerPool;
}

export interface EbbOptions {
  sb: Pick<Sandbox, 'kubeconfig' | 'redisUrl'>;
  namespaces: string[];
  workers: WorkerMode;
  watcherNodeOptions: string;
  workerNodeOptions: string;
  /** Worker settings beyond the manifest's. */
  workerEnv?: Record<string, string>;
  /** Watcher settings beyond the manifest's. */
  watcherEnv?: Record<string, string>;
  dist: boolean;
  progress: (msg: string) => void;
}

/**
 * `--workers keda|<n>`, `--scale-down-seconds` (KEDA's cooldown and the HPA's scale-down window) and
 * `--jobs-per-worker` (instead of the shipped ScaledObject's, to weigh another) as a mode.
 */
export function workerMode(workers: string, scaleDownSeconds: number, jobsPerWorker?: number, intervalMs = 1_000, threadBacklog?: number): WorkerMode {
  if (workers !== 'keda') {
    const count = Number(workers);
    if (!Number.isInteger(count) || count < 1) throw new Error(`--workers: "keda" or a count, not ${workers}`);
    return { mode: 'fixed', count };
  }
  const ms = scaleDownSeconds * 1000;
  if (jobsPerWorker !== undefined && !(Number.isInteger(jobsPerWorker) && jobsPerWorker >= 1))
    throw new Error(`--jobs-per-worker: a count, not ${jobsPerWorker}`);
  if (threadBacklog !== undefined && !(Number.isInteger(threadBacklog) && threadBacklog >= 0))
    throw new Error(`--thread-backlog: a count, not ${threadBacklog}`);
  const shipped = shippedScaleSpec();
  return {
    mode: 'keda',
    spec: {
      ...shipped,
      jobsPerWorker: jobsPerWorker ?? shipped.jobsPerWorker,
      threadBacklog: threadBacklog ?? shipped.threadBacklog,
      cooldownMs: ms,
      scaleDownStabilizationMs: ms,
    },
    intervalMs,
  };
}

export function describeWorkers(w: WorkerMode): string {
  if (w.mode === 'fixed') return `${w.count} ebb worker${w.count === 1 ? '' : 's'} (fixed)`;
  const s = w.spec;
  return (
    `ebb workers scaled as KEDA would: ceil(backlog / ${s.jobsPerWorker}) within ${Math.max(1, s.minReplicas)}..${s.maxReplicas} while active, ` +
    (s.threadBacklog === undefined ? '' : `past threadBacklog ${s.threadBacklog} (with the watcher's worker thread), `) +
    `HPA tolerance ${s.tolerance}, scale-down window ${s.scaleDownStabilizationMs / 1000} s, cooldown to ${s.minReplicas} ${s.cooldownMs / 1000} s, ` +
    `backlog read every ${w.intervalMs / 1000} s`
  );
}

export async function startEbb(o: EbbOptions): Promise<EbbProcesses> {
  // Info level: the processes announce their ops (and scaler) port in the `... started` line.
  const base = { ...benchEbbEnv(o.sb, o.namespaces), EBB_LOG_LEVEL: 'info' };
  const opts = { dist: o.dist };
  const watcher = spawnEbb('watcher', { ...base, ...o.watcherEnv, EBB_SCALER: 'true', NODE_OPTIONS: o.watcherNodeOptions }, () => false, opts);
  const started = await watcher.waitForLog((l) => l.msg === 'watcher started', 60_000, 'watcher started');
  const w = o.workers;
  const scalerPort = w.mode === 'keda' ? Number(started['scalerPort']) : undefined;
  if (scalerPort !== undefined && !Number.isInteger(scalerPort)) throw new Error('the watcher did not report its scaler port');
  const planner = w.mode === 'keda' ? new KedaScalePlanner(w.spec) : { next: (): number => w.count };
  const pool = startWorkerPool({
    scalerPort,
    spawn: () => spawnEbb('worker', { ...base, ...o.workerEnv, NODE_OPTIONS: o.workerNodeOptions }, () => false, opts),
    jobsPerWorker: w.mode === 'keda' ? w.spec.jobsPerWorker : undefined,
    threadBacklog: w.mode === 'keda' ? w.spec.threadBacklog : undefined,
    planner,
    intervalMs: w.mode === 'keda' ? w.intervalMs : 1_000,
    progress: o.progress,
  });
  const port = Number(started['port']);
  return { watcher, watcherPort: Number.isInteger(port) ? port : undefined, pool };
}
