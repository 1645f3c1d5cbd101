/**
 * What the watcher and its worker thread (`EBB_WATCHER_WORKER_THREAD`) say to each other over the thread's port:
 * the watcher asks for the worker's probes and metrics (it serves them on its own endpoint) and tells it to stop;
 * the thread says when its worker started and when it stopped.
 */

/** The watcher to the thread. */
export type ToThread = { type: 'ask'; id: number; what: 'probes' | 'metrics' } | { type: 'stop' };

/** The worker's probes: undefined when ready (healthy), else why not. */
export interface ThreadProbes {
  readiness: string | undefined;
  health: string | undefined;
}

/** The thread to the watcher. */
export type FromThread =
  { type: 'started' } | { type: 'probes'; id: number; probes: ThreadProbes } | { type: 'metrics'; id: number; text: string } | { type: 'stopped' };

/** The label every metric of the thread's worker carries, so that a scrape tells its reconciles from a worker process's. */
export const THREAD_METRIC_LABELS: Readonly<Record<string, string>> = Object.freeze({ thread: 'watcher' });

export function isToThread(m: unknown): m is ToThread {
  const t = (m as { type?: unknown } | null)?.type;
  return t === 'ask' || t === 'stop';
}
