import { Queue, type JobsOptions, type QueueOptions, type WorkerOptions } from 'bullmq';
import type { RedisClient } from './connection.ts';
import type { QueueConfig } from './settings.ts';
import { RECONCILE_QUEUE, TIMERS_QUEUE, type ObjectKey } from './names.ts';
import { backoffStrategy, RECONCILE_BACKOFF_TYPE } from './retry.ts';
import type { TimerData } from './timers.ts';

/**
 * The BullMQ wiring of the two queues. Producers must create their Queue objects here: the job options
 * (attempts, the custom backoff type, retention) travel with each job, so every producer must agree.
 */

export type ReconcileQueue = Queue<ObjectKey, void, string>;
export type TimersQueue = Queue<TimerData, void, string>;

/** Options every reconcile job carries. */
export function reconcileJobOptions(cfg: QueueConfig): JobsOptions {
  return {
    attempts: cfg.attempts,
    backoff: { type: RECONCILE_BACKOFF_TYPE },
    removeOnComplete: { count: cfg.removeOnComplete },
    removeOnFail: { count: cfg.removeOnFail },
  };
}

/** Timer jobs only enqueue a reconcile: retried quickly on a Redis hiccup, removed once done. */
export function timerJobOptions(cfg: QueueConfig): JobsOptions {
  return {
    attempts: 10,
    backoff: { type: 'exponential', delay: 200, jitter: 0.5 },
    removeOnComplete: true,
    removeOnFail: { count: cfg.removeOnFail },
  };
}

function queueOptions(connection: RedisClient, cfg: QueueConfig, defaultJobOptions: JobsOptions): QueueOptions {
  return { connection, prefix: cfg.prefix, defaultJobOptions };
}

export function createReconcileQueue(connection: RedisClient, cfg: QueueConfig): ReconcileQueue {
  const queue = new Queue<ObjectKey, void, string>(RECONCILE_QUEUE, queueOptions(connection, cfg, reconcileJobOptions(cfg)));
  connections.set(queue, connection);
  return queue;
}

export function createTimersQueue(connection: RedisClient, cfg: QueueConfig): TimersQueue {
  const queue = new Queue<TimerData, void, string>(TIMERS_QUEUE, queueOptions(connection, cfg, timerJobOptions(cfg)));
  connections.set(queue, connection);
  return queue;
}

const connections = new WeakMap<object, RedisClient>();

/** The ioredis client a queue was created with (for the few operations BullMQ has no API for). */
export function connectionOf(queue: object): RedisClient | undefined {
  return connections.get(queue);
}

/**
 * Options for the reconcile Worker (in `ebb worker`): the connection must come from
 * `redisConnection(url, {forWorker: true})`. The backoff strategy is the retry policy of retry.ts.
 */
export function reconcileWorkerOptions(connection: RedisClient, cfg: QueueConfig): WorkerOptions {
  return {
    connection,
    prefix: cfg.prefix,
    concurrency: cfg.workerConcurrency,
    lockDuration: cfg.lockDurationMs,
    stalledInterval: cfg.lockDurationMs,
    maxStalledCount: 1,
    settings: { backoffStrategy: backoffStrategy(cfg.backoff) },
  };
}

/**
 * How long the idle timers Worker blocks on its queue's marker before it polls again, in seconds. BullMQ's
 * default is 5; 10 is the longest block it allows itself when a delayed job waits (longer blocking commands
 * risk trouble on reconnection). A timer still fires on time: adding a delayed job wakes the block, which
 * then lasts until the job is due.
 */
export const TIMERS_DRAIN_DELAY_S = 10;

/** Options for the timers Worker (in `ebb watcher`): cheap jobs, so a fixed generous concurrency. */
export function timersWorkerOptions(connection: RedisClient, cfg: QueueConfig): WorkerOptions {
  return {
    connection,
    prefix: cfg.prefix,
    concurrency: 16,
    lockDuration: cfg.lockDurationMs,
    drainDelay: TIMERS_DRAIN_DELAY_S,
  };
}
