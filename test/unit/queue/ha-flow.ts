/**
 * ebb's queue code end to end against a Redis of any mode, as the watcher and a worker wire it: objects are
 * enqueued, a worker reconciles them, and a reconcile sets a timer (a grace period) whose firing reconciles
 * the object again; only then is it settled. When a connection reports Redis restored (a restart, a Sentinel
 * failover, a Cluster node lost), every known object is enqueued again in the background, as the watcher's
 * `onRedisRestored` does, so anything Redis lost (jobs, timers) is derived again.
 */
import { Worker, type Queue } from 'bullmq';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { redisConnection, type RedisClient } from '../../../src/queue/connection.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { formatKey, RECONCILE_QUEUE, TIMERS_QUEUE, type ObjectKey } from '../../../src/queue/names.ts';
import { createReconcileQueue, createTimersQueue, reconcileWorkerOptions, timersWorkerOptions } from '../../../src/queue/queues.ts';
import { parseQueueConfig, type QueueConfig } from '../../../src/queue/settings.ts';
import { processTimer, setTimer, type TimerData } from '../../../src/queue/timers.ts';

export interface Flow {
  readonly producer: RedisClient;
  /** Objects whose timer fired (or whose grace period was over at a later reconcile). */
  readonly settled: ReadonlySet<string>;
  /** How often a reconcile started while another reconcile of the same object was running. */
  overlaps(): number;
  /** How often the producer connection reported Redis restored. */
  restored(): number;
  /** Enqueues like the watcher's sink: retried until Redis takes it. */
  add(key: ObjectKey, signal: AbortSignal): Promise<void>;
  /** What the queues hold and what the workers are doing, for the message of a failed wait. */
  describe(): Promise<string>;
  close(): Promise<void>;
}

export function startFlow(cfg: QueueConfig, graceMs: number): Flow {
  const known = new Map<string, ObjectKey>();
  const dueAt = new Map<string, number>();
  const settled = new Set<string>();
  const running = new Set<string>();
  let overlaps = 0;
  let restored = 0;
  const producer = redisConnection(cfg.redis, { forWorker: false, name: 'ha-producer', onRestored: () => onRestored() });
  const workerConn = redisConnection(cfg.redis, { forWorker: true, name: 'ha-worker' });
  const timersConn = redisConnection(cfg.redis, { forWorker: true, name: 'ha-timers' });
  // Status changes of the three connections (ms), for the message of a failed wait.
  const trace: string[] = [];
  const started = Date.now();
  for (const [name, c] of Object.entries({ producer, worker: workerConn, timers: timersConn })) {
    for (const ev of ['connecting', 'ready', 'close', 'reconnecting', 'end']) c.on(ev, () => trace.push(`${Date.now() - started} ${name} ${ev}`));
  }
  const queue = createReconcileQueue(producer, cfg);
  const timers = createTimersQueue(producer, cfg);
  for (const q of [queue, timers]) q.on('error', () => undefined);

  const onRestored = (): void => {
    restored++;
    void (async () => {
      for (const key of known.values()) await enqueue(queue, key, { background: true }).catch(() => undefined);
    })();
  };

  // A miniature reconciler: the first reconcile starts a grace period (a timer); a reconcile after it is over settles.
  const worker = new Worker<ObjectKey, void, string>(
    RECONCILE_QUEUE,
    async (job) => {
      const id = formatKey(job.data);
      if (running.has(id)) overlaps++;
      running.add(id);
      try {
        const due = dueAt.get(id) ?? Date.now() + graceMs;
        dueAt.set(id, due);
        if (Date.now() >= due) settled.add(id);
        else await setTimer(timers, job.data, 'grace', due);
      } finally {
        running.delete(id);
      }
    },
    reconcileWorkerOptions(workerConn, cfg),
  );
  const timersWorker = new Worker<TimerData, void, string>(TIMERS_QUEUE, (job) => processTimer(job, queue), timersWorkerOptions(timersConn, cfg));
  for (const w of [worker, timersWorker]) w.on('error', () => undefined);

  return {
    producer,
    settled,
    overlaps: () => overlaps,
    restored: () => restored,
    add: async (key, signal) => {
      known.set(formatKey(key), key);
      for (;;) {
        try {
          await enqueue(queue, key);
          return;
        } catch {
          await sleep(100, signal);
        }
      }
    },
    describe: async () => {
      const unsettled = [...known.keys()].filter((k) => !settled.has(k));
      return [
        `reconcile ${await jobCounts(queue)}, timers ${await jobCounts(timers)}`,
        `reconcile worker ${workerState(worker)}, timers worker ${workerState(timersWorker)}`,
        `restored ${restored}; connections ${producer.status}/${workerConn.status}/${timersConn.status}: ${trace.join(', ')}`,
        `unsettled ${unsettled.slice(0, 5).join(' ')}`,
      ].join('; ');
    },
    close: async () => {
      await Promise.all([worker.close(true), timersWorker.close(true)]).catch(() => undefined);
      await Promise.all([queue.close(), timers.close()]).catch(() => undefined);
      for (const c of [producer, workerConn, timersConn]) c.disconnect();
    },
  };
}

async function jobCounts(q: Queue): Promise<string> {
  return JSON.stringify(await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed').catch((e: Error) => e.message));
}

/** A Worker's fetch loop as BullMQ keeps it (internal fields, read for diagnosis only) and its blocking connection. */
function workerState(w: Worker): string {
  const i = w as unknown as { waiting: unknown; drained: unknown; blockUntil: unknown; backend?: { blockingConnection?: { _client?: { status?: string } } } };
  const blocking = i.backend?.blockingConnection?._client?.status;
  return JSON.stringify({ running: w.isRunning(), waiting: i.waiting !== null, drained: i.drained, blockUntil: i.blockUntil, blocking });
}

export const app = (i: number): ObjectKey => ({ kind: 'App', namespace: 'ha', name: `app-${i}` });

/** Waits until `count` objects settled; on timeout the error says what the queues and workers were doing. */
export async function waitSettled(f: Flow, count: number, timeoutMs: number): Promise<void> {
  try {
    await waitFor(() => (f.settled.size === count ? true : undefined), { timeoutMs, intervalMs: 200, what: `all ${count} objects settled` });
  } catch (err) {
    throw new Error(`${(err as Error).message} (${f.settled.size} so far): ${await f.describe()}`);
  }
}

/** `work`, or after `timeoutMs` an error that says what the queues and workers were doing. */
export async function within<T>(f: Flow, work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => void f.describe().then((d) => reject(new Error(`${what}: not done after ${timeoutMs} ms: ${d}`))), timeoutMs);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The queue settings of the failover tests (short locks and backoffs), on top of the mode's own settings. */
export function failoverConfig(mode: Record<string, string>): QueueConfig {
  return parseQueueConfig({
    ...mode,
    EBB_QUEUE_LOCK_DURATION: '5s',
    EBB_QUEUE_BACKOFF_BASE: '100ms',
    EBB_QUEUE_BACKOFF_MAX: '1s',
    EBB_WORKER_CONCURRENCY: '4',
  });
}

/** Enqueues `count` objects 30 ms apart; half-way, once some have settled, `crash` kills the primary. */
export async function addAcrossCrash(f: Flow, count: number, crash: () => Promise<void>, signal: AbortSignal): Promise<void> {
  for (let i = 0; i < count; i++) {
    await f.add(app(i), signal);
    if (i === count / 2) {
      await waitFor(() => (f.settled.size >= 5 ? true : undefined), { timeoutMs: 30_000, what: 'some objects settled before the failover' });
      await crash();
    }
    await sleep(30, signal);
  }
}
