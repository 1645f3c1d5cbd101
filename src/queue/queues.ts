import { Queue, type JobsOptions, type QueueOptions, type WorkerOptions } from 'bullmq';
import type { RedisClient } from './connection.ts';
import type { QueueConfig } from './settings.ts';
import { RECONCILE_QUEUE, TIMERS_QUEUE, type ObjectKey, type TimerData } from './names.ts';
import { backoffStrategy, RECONCILE_BACKOFF_TYPE } from './retry.ts';
import { shareOf, shardPrefix } from './shards.ts';

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

function queueOptions(connection: RedisClient, cfg: QueueConfig, shard: number, defaultJobOptions: JobsOptions): QueueOptions {
  return { connection, prefix: shardPrefix(cfg.prefix, shard), defaultJobOptions };
}

/** The reconcile queue of one shard (`shards.ts`); shard 0, the default, is the only one of an unsharded install. */
export function createReconcileQueue(connection: RedisClient, cfg: QueueConfig, shard = 0): ReconcileQueue {
  const queue = new Queue<ObjectKey, void, string>(RECONCILE_QUEUE, queueOptions(connection, cfg, shard, reconcileJobOptions(cfg)));
  registered.set(queue, { connection, shard });
  return queue;
}

/** The timers queue of one shard: an object's timers live in the shard of its reconcile jobs. */
export function createTimersQueue(connection: RedisClient, cfg: QueueConfig, shard = 0): TimersQueue {
  const queue = new Queue<TimerData, void, string>(TIMERS_QUEUE, queueOptions(connection, cfg, shard, timerJobOptions(cfg)));
  registered.set(queue, { connection, shard });
  return queue;
}

/** The reconcile queue of every shard, indexed by shard: route an object with `forKey` (shards.ts). */
export function createReconcileQueues(connection: RedisClient, cfg: QueueConfig): ReconcileQueue[] {
  return Array.from({ length: cfg.shards }, (_, shard) => createReconcileQueue(connection, cfg, shard));
}

/** The timers queue of every shard, indexed by shard. */
export function createTimersQueues(connection: RedisClient, cfg: QueueConfig): TimersQueue[] {
  return Array.from({ length: cfg.shards }, (_, shard) => createTimersQueue(connection, cfg, shard));
}

const registered = new WeakMap<object, { connection: RedisClient; shard: number }>();

/** The ioredis client a queue was created with (for the few operations BullMQ has no API for). */
export function connectionOf(queue: object): RedisClient | undefined {
  return registered.get(queue)?.connection;
}

/** The shard a queue made here belongs to (0 for any other queue). */
export function shardOfQueue(queue: object): number {
  return registered.get(queue)?.shard ?? 0;
}

/**
 * Options for the reconcile Worker of one shard (in `ebb worker`, one Worker per shard): the connection must
 * come from `redisConnection(url, {forWorker: true})`. The process's concurrency is split across the shards
 * (shares differ by at most one and add up to EBB_WORKER_CONCURRENCY). The backoff strategy is the retry
 * policy of retry.ts.
 */
export function reconcileWorkerOptions(connection: RedisClient, cfg: QueueConfig, shard = 0): WorkerOptions {
  return {
    connection,
    prefix: shardPrefix(cfg.prefix, shard),
    concurrency: shareOf(cfg.workerConcurrency, cfg.shards, shard),
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

/** Options for the timers Worker of one shard (in `ebb watcher`): cheap jobs, so a fixed generous concurrency per shard. */
export function timersWorkerOptions(connection: RedisClient, cfg: QueueConfig, shard = 0): WorkerOptions {
  return {
    connection,
    prefix: shardPrefix(cfg.prefix, shard),
    concurrency: 16,
    lockDuration: cfg.lockDurationMs,
    drainDelay: TIMERS_DRAIN_DELAY_S,
  };
}
