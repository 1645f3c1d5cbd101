/**
 * The watcher's worker thread (`EBB_WATCHER_WORKER_THREAD`): one reconcile worker in a `worker_threads`
 * isolate of the watcher's process, its heap bounded by `resourceLimits`, so that a reconcile's memory (a
 * tenant's App of thousands of pods, a large analysis answer) never reaches the watcher's heap, which every
 * event passes through. A thread that ends by itself (its heap limit, an error it did not catch) is started
 * again after a back-off (`worker-thread-plan.ts`) while the watcher goes on; `stop` lets the thread's worker
 * finish its running reconciles (bounded), then ends it. The watcher serves the thread's readiness and
 * metrics on its own endpoint, asking over the thread's port (`src/workers/thread-protocol.ts`).
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { errorSummary } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import type { Env } from '../common/settings.ts';
import { sleep } from '../common/wait.ts';
import type { FromThread, ThreadProbes, ToThread } from '../workers/thread-protocol.ts';
import { RESTART_POLICY, restartPlan, threadEnd, threadResourceLimits, type RestartPolicy, type ThreadEnd } from './worker-thread-plan.ts';

/** The shipped entry, beside this module in the same form (`.ts` run from source, `.js` compiled). */
const SHIPPED_ENTRY = new URL(`../workers/thread-main${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** How long the watcher waits for the thread's answer to a probe or a metrics scrape. */
const ASK_TIMEOUT_MS = 2_000;

export interface WorkerThreadOptions {
  /** The thread's environment: the worker's settings (the watcher's own environment). */
  env: Env;
  /** The thread's old space, MiB (`resourceLimits`). */
  heapMb: number;
  /** How long `stop` waits for the thread's worker to stop (its running reconciles) before ending the thread. */
  stopTimeoutMs: number;
  log: Logger;
  /** Called each time a thread ended by itself (before its restart), with why. */
  onEnd?: (end: ThreadEnd) => void;
  /** The thread's entry module; default the shipped one. A seam for tests. */
  entry?: URL;
  policy?: RestartPolicy;
}

export type ThreadState = 'starting' | 'running' | 'backoff' | 'stopping';

export interface WorkerThread {
  state(): ThreadState;
  /** Why the thread's worker is not ready (starting, waiting to restart, or its worker's own answer); undefined: ready. */
  readiness(): Promise<string | undefined>;
  /** The thread's worker's metrics (Prometheus text); empty while no thread runs. */
  metrics(): Promise<string>;
  /** Threads started so far (1 + restarts). */
  starts(): number;
  stop(): Promise<void>;
}

interface Live {
  worker: Worker;
  started: boolean;
  pending: Map<number, (m: FromThread | undefined) => void>;
  exited: Promise<{ err: unknown; code: number }>;
}

const plainEnv = (env: Env): Record<string, string> => Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));

export function startWorkerThread(o: WorkerThreadOptions): WorkerThread {
  const ac = new AbortController();
  const policy = o.policy ?? RESTART_POLICY;
  let state: ThreadState = 'starting';
  let live: Live | undefined;
  let lastEnd: ThreadEnd | undefined;
  let starts = 0;
  let seq = 0;

  const spawn = (): Live => {
    starts++;
    state = 'starting';
    const worker = new Worker(o.entry ?? SHIPPED_ENTRY, {
      env: plainEnv(o.env),
      name: 'ebb-worker',
      resourceLimits: threadResourceLimits(o.heapMb),
    });
    let err: unknown;
    const pending = new Map<number, (m: FromThread | undefined) => void>();
    const exited = new Promise<{ err: unknown; code: number }>((resolve) => {
      worker.once('exit', (code) => {
        for (const answer of pending.values()) answer(undefined);
        pending.clear();
        resolve({ err, code });
      });
    });
    const l: Live = { worker, started: false, pending, exited };
    worker.on('error', (e: unknown) => (err = e));
    worker.on('message', (m: FromThread) => {
      if (m.type === 'started') {
        l.started = true;
        if (state === 'starting') state = 'running';
        o.log.info({ start: starts }, 'worker thread started');
      } else if (m.type === 'stopped') {
        void worker.terminate();
      } else {
        pending.get(m.id)?.(m);
        pending.delete(m.id);
      }
    });
    return l;
  };

  const loop = (async () => {
    let ends = 0;
    while (!ac.signal.aborted) {
      const startedAt = Date.now();
      live = spawn();
      const { err, code } = await live.exited;
      live = undefined;
      if (ac.signal.aborted) break;
      const end = threadEnd(err);
      const plan = restartPlan(ends, Date.now() - startedAt, policy);
      ends = plan.endsInARow;
      lastEnd = end;
      state = 'backoff';
      o.onEnd?.(end);
      o.log.error(
        { end, exitCode: code, ...(err === undefined ? {} : { err: errorSummary(err) }), endsInARow: ends, restartInMs: plan.delayMs },
        'worker thread ended; restarting it',
      );
      await sleep(plan.delayMs, ac.signal).catch(() => undefined);
    }
  })();

  const ask = (what: 'probes' | 'metrics'): Promise<FromThread | undefined> => {
    const l = live;
    if (!l?.started) return Promise.resolve(undefined);
    const id = ++seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        l.pending.delete(id);
        resolve(undefined);
      }, ASK_TIMEOUT_MS);
      timer.unref();
      l.pending.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      l.worker.postMessage({ type: 'ask', id, what } satisfies ToThread);
    });
  };

  return {
    state: () => state,
    starts: () => starts,
    readiness: async () => {
      if (state === 'stopping') return 'worker thread stopping';
      if (state === 'backoff') return `worker thread restarting (it ended: ${lastEnd ?? 'exit'})`;
      if (state === 'starting') return 'worker thread starting';
      const m = await ask('probes');
      if (m?.type !== 'probes') return 'worker thread not answering';
      const p: ThreadProbes = m.probes;
      return p.readiness ? `worker thread: ${p.readiness}` : undefined;
    },
    metrics: async () => {
      const m = await ask('metrics');
      return m?.type === 'metrics' ? m.text : '';
    },
    stop: async () => {
      state = 'stopping';
      ac.abort();
      const l = live;
      if (l) {
        l.worker.postMessage({ type: 'stop' } satisfies ToThread);
        const waited = new AbortController();
        const timeout = sleep(o.stopTimeoutMs, waited.signal).then(
          () => 'timeout' as const,
          () => 'exited' as const,
        );
        const outcome = await Promise.race([l.exited.then(() => 'exited' as const), timeout]);
        waited.abort();
        if (outcome === 'timeout') {
          o.log.warn({ timeoutMs: o.stopTimeoutMs }, 'worker thread did not stop in time; ending it');
          await l.worker.terminate();
        }
      }
      await loop;
      o.log.info('worker thread stopped');
    },
  };
}
