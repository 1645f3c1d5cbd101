import type { Queue } from 'bullmq';
import { connectionOf } from './queues.ts';

/** What the backlog needs of a queue; structural, so queues of any job type fit. */
export type BacklogQueue = Pick<Queue, 'isPaused' | 'getJobCounts' | 'getDelayedCount' | 'toKey'>;

export interface Backlog {
  wait: number;
  prioritized: number;
  active: number;
  /** Delayed jobs (retry backoffs; on the timers queue, timers) due before now + window. */
  delayedDueSoon: number;
  paused: boolean;
  /** What the KEDA scaler reports: the sum of the above, or 0 when the queue is paused. */
  total: number;
  /**
   * When the backlog grows without any enqueue: the time (epoch ms) the earliest delayed job not yet due
   * soon enters the window. Undefined when there is none, when the queue is paused, or when the queue's
   * Redis client is unknown (a queue not made by createReconcileQueue).
   */
  growsAt?: number;
}

/** BullMQ scores a delayed job `dueAt * 0x1000 + counter` (its getDelayedScore.lua). */
export function delayedDueAt(score: number): number {
  return Math.floor(score / 0x1000);
}

/** The earliest due time of a delayed job strictly after `after` (epoch ms), from the delayed set's scores. */
async function nextDelayedAfter(queue: BacklogQueue, after: number): Promise<number | undefined> {
  const redis = connectionOf(queue);
  if (!redis) return undefined;
  const [, score] = await redis.zrangebyscore(queue.toKey('delayed'), (after + 1) * 0x1000, '+inf', 'WITHSCORES', 'LIMIT', 0, 1);
  return score === undefined ? undefined : delayedDueAt(Number(score));
}

/**
 * The "due soon" backlog of a queue for the KEDA external scaler. BullMQ promotes delayed jobs only inside
 * a running Worker, so counting `wait` alone would strand retries at zero workers: delayed jobs due within
 * `windowMs` count too. A paused queue reports 0 so KEDA scales its workers to zero.
 */
export async function dueSoonBacklog(queue: BacklogQueue, windowMs: number, now: number = Date.now()): Promise<Backlog> {
  const cutoff = Math.floor(now + Math.max(0, windowMs));
  const [paused, counts, delayedDueSoon, nextDue] = await Promise.all([
    queue.isPaused(),
    queue.getJobCounts('wait', 'prioritized', 'active'),
    // Counts jobs scheduled strictly before the cutoff.
    queue.getDelayedCount(cutoff + 1),
    nextDelayedAfter(queue, cutoff),
  ]);
  const wait = counts.wait ?? 0;
  const prioritized = counts.prioritized ?? 0;
  const active = counts.active ?? 0;
  const total = paused ? 0 : wait + prioritized + active + delayedDueSoon;
  const growsAt = paused || nextDue === undefined ? undefined : nextDue - Math.max(0, windowMs);
  return { wait, prioritized, active, delayedDueSoon, paused, total, growsAt };
}

/** The backlog of every shard's queue (indexed by shard) and their sum, which is what the KEDA scaler reports. */
export interface ShardedBacklog extends Backlog {
  shards: Backlog[];
}

/** `dueSoonBacklog` of every shard, summed: counts add up, paused only when every shard is, growsAt the earliest. */
export async function shardedBacklog(queues: readonly BacklogQueue[], windowMs: number, now: number = Date.now()): Promise<ShardedBacklog> {
  const shards = await Promise.all(queues.map((q) => dueSoonBacklog(q, windowMs, now)));
  return { ...sumBacklogs(shards), shards };
}

/** Pure: the sum of shard backlogs. */
export function sumBacklogs(shards: readonly Backlog[]): Backlog {
  const add = (pick: (b: Backlog) => number): number => shards.reduce((sum, b) => sum + pick(b), 0);
  const grows = shards.map((b) => b.growsAt).filter((t): t is number => t !== undefined);
  return {
    wait: add((b) => b.wait),
    prioritized: add((b) => b.prioritized),
    active: add((b) => b.active),
    delayedDueSoon: add((b) => b.delayedDueSoon),
    paused: shards.length > 0 && shards.every((b) => b.paused),
    total: add((b) => b.total),
    ...(grows.length > 0 ? { growsAt: Math.min(...grows) } : {}),
  };
}

/**
 * What the workers have to do, for the KEDA scaler: every reconcile shard's backlog and the measure queue's, summed,
 * so measurements waiting alone start a worker too (every worker consumes both).
 */
export async function workerBacklog(reconcile: readonly BacklogQueue[], measure: BacklogQueue, windowMs: number, now: number = Date.now()): Promise<Backlog> {
  const [shards, measuring] = await Promise.all([shardedBacklog(reconcile, windowMs, now), dueSoonBacklog(measure, windowMs, now)]);
  return sumBacklogs([shards, measuring]);
}
