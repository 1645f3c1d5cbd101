/**
 * How the watcher starts its worker thread (`EBB_WATCHER_WORKER_THREAD`): the worker's settings checked before
 * anything starts, the thread's stop bound, its metrics on the watcher's endpoint and the backlog the KEDA scaler
 * leaves it. The thread itself is `worker-thread.ts`, loaded only when it is on.
 */
import type { Logger } from '../common/log.ts';
import { loadKubeConfig } from '../kube/kubeconfig.ts';
import type { WatcherConfig } from './config.ts';
import type { WatcherMetrics } from './metrics.ts';
import type { WorkerThread } from './worker-thread.ts';

/** What starting the worker thread needs beyond the watcher's configuration (a seam for tests: another entry). */
export interface WatcherDeps {
  workerThreadEntry?: URL;
}

/** How the watcher starts its worker thread; with it off, `start` starts none. */
interface ThreadStart {
  /** How long the thread's stop may take (0: no thread). */
  stopMs: number;
  /** What the `watcher started` line says of it. */
  described: { heapMb: number } | false;
  start(log: Logger, metrics: WatcherMetrics): WorkerThread | undefined;
}

const NO_THREAD: ThreadStart = { stopMs: 0, described: false, start: () => undefined };

/**
 * The worker thread's start, when it is on: the worker's settings are checked before the watcher starts
 * anything (a bad one fails the watcher's start, as it fails `ebb worker`'s), and so is its kubeconfig. The
 * thread's module is loaded only when it is on.
 */
export async function workerThreadIfOn(cfg: WatcherConfig, deps: WatcherDeps): Promise<ThreadStart> {
  const on = cfg.workerThread;
  if (!on) return NO_THREAD;
  // The thread's own kubeconfig is read now, so that a missing or bad one fails the watcher's start with its
  // reason rather than ending every thread the watcher starts.
  if (on.kubeconfig !== undefined) loadKubeConfig(on.kubeconfig);
  const { parseWorkerConfig } = await import('../workers/config.ts');
  const { startWorkerThread } = await import('./worker-thread.ts');
  // The thread's own stop waits this long for running reconciles, and at most a little more for the rest.
  const stopMs = parseWorkerConfig(on.env).shutdownTimeoutMs + WORKER_THREAD_STOP_MARGIN_MS;
  return {
    stopMs,
    described: { heapMb: on.heapMb },
    start: (log, metrics) =>
      startWorkerThread({
        env: on.env,
        heapMb: on.heapMb,
        stopTimeoutMs: stopMs,
        log,
        onEnd: (end) => metrics.workerThreadEnds.inc({ end }),
        ...(deps.workerThreadEntry ? { entry: deps.workerThreadEntry } : {}),
      }),
  };
}

/** The thread's metrics after the watcher's on its endpoint. */
export const threadMetrics = (thread: WorkerThread | undefined): { moreMetrics?: () => Promise<string> } =>
  thread ? { moreMetrics: () => thread.metrics() } : {};

/** What a stopping worker thread may take beyond its worker's `EBB_SHUTDOWN_TIMEOUT` (the Event drain, closing connections). */
const WORKER_THREAD_STOP_MARGIN_MS = 5_000;

/**
 * The backlog the KEDA scaler leaves to the thread before it asks for worker processes: `threadBacklog` while the
 * thread runs or starts (the watcher's first lists must not wake a worker process), none while it waits to restart.
 */
export function backlogLeftTo(thread: WorkerThread, threadBacklog: number): number {
  const state = thread.state();
  return state === 'running' || state === 'starting' ? threadBacklog : 0;
}
