import type { Queue } from 'bullmq';
import type { RedisClient } from './connection.ts';
import { enqueue } from './enqueue.ts';
import { shardLimits, type KnobbedQueue } from './knobs.ts';
import { validateKey, type ObjectKey } from './names.ts';
import { forKey } from './shards.ts';
import { withLimitsLock, writeOverride, type LimitName, type RateLimit } from './overrides.ts';
import type { TimerData } from './timers.ts';

/**
 * What `ebb queue` changes at runtime. Every change lives in Redis, so running workers obey it at their next
 * job and no process's restart undoes it.
 */

/** A new value for one queue-wide limit: a value, `null` for no limit, or `'reset'` for the watcher's configuration. */
export type LimitChange = { limit: 'globalConcurrency'; value: number | null | 'reset' } | { limit: 'globalRateLimit'; value: RateLimit | null | 'reset' };

/** A limit that cannot be split across the shards (each needs at least 1). */
export class LimitTooLowError extends Error {
  override readonly name = 'LimitTooLowError';
}

function one<T>(items: T | readonly T[]): readonly T[] {
  return Array.isArray(items) ? (items as readonly T[]) : [items as T];
}

/**
 * Stores the override and applies it at once (under the limits lock, so a resync running now cannot undo
 * it), split across the shards' reconcile queues (indexed by shard) like the watcher's configured limits.
 * A reset only removes the override: the watcher re-applies its configured value at its next resync or start.
 */
export async function changeLimit(queues: KnobbedQueue | readonly KnobbedQueue[], client: RedisClient, prefix: string, change: LimitChange): Promise<void> {
  const list = one(queues);
  const name: LimitName = change.limit;
  const value = change.value;
  const amount = value === null || value === 'reset' ? undefined : typeof value === 'number' ? value : value.max;
  if (amount !== undefined && amount < list.length) {
    throw new LimitTooLowError(`${amount} is below the number of queue shards (${list.length}): each shard needs at least 1`);
  }
  await withLimitsLock(client, prefix, async () => {
    if (change.value === 'reset') {
      await writeOverride(client, prefix, name, undefined);
      return;
    }
    await writeOverride(client, prefix, name, change.value);
    await Promise.all(list.map((queue, shard) => applyChange(queue, change, list.length, shard)));
  });
}

async function applyChange(queue: KnobbedQueue, change: LimitChange, shards: number, shard: number): Promise<void> {
  if (change.limit === 'globalConcurrency') {
    if (change.value === null) await queue.removeGlobalConcurrency();
    else if (change.value !== 'reset')
      await queue.setGlobalConcurrency(shardLimits({ globalConcurrency: change.value, globalRateLimit: undefined }, shards, shard).globalConcurrency ?? 1);
  } else if (change.value === null) await queue.removeGlobalRateLimit();
  else if (change.value !== 'reset') {
    const share = shardLimits({ globalConcurrency: undefined, globalRateLimit: change.value }, shards, shard).globalRateLimit;
    await queue.setGlobalRateLimit(share?.max ?? 1, change.value.durationMs);
  }
}

export interface RetryFailedResult {
  /** Failed jobs looked at (reconcile and timer jobs). */
  failed: number;
  /** Objects given a new reconcile job. */
  added: number;
  /** Objects that already had a pending job, which covers them. */
  merged: number;
  /** Failed jobs whose payload is not an object key (left in place). */
  unreadable: number;
}

type ReconcileLike = Queue<ObjectKey, unknown, string>;
type TimersLike = Queue<TimerData, unknown, string>;

const PAGE = 200;

function keyOf(data: unknown, fromTimer: boolean): ObjectKey | undefined {
  try {
    const key = fromTimer ? (data as TimerData).key : (data as ObjectKey);
    return validateKey(key);
  } catch {
    return undefined;
  }
}

/**
 * Retries every failed job (of every shard; queues indexed by shard) as a fresh reconcile of its object, in
 * the object's shard: a reconcile job carries only the object's key
 * and re-reads live state, and a timer's only effect is such a reconcile, so enqueueing the key does what a
 * retry would, keeps one job per object (a retried old job would bypass the deduplication of a job enqueued
 * since) and starts with the full number of attempts. Each failed job is removed once its object is enqueued.
 */
export async function retryFailed(reconcile: ReconcileLike | readonly ReconcileLike[], timers: TimersLike | readonly TimersLike[]): Promise<RetryFailedResult> {
  const result: RetryFailedResult = { failed: 0, added: 0, merged: 0, unreadable: 0 };
  const reconciles = one(reconcile);
  const sources: [Queue, boolean][] = [
    ...reconciles.map((q): [Queue, boolean] => [q as Queue, false]),
    ...one(timers).map((q): [Queue, boolean] => [q as Queue, true]),
  ];
  for (const [queue, fromTimer] of sources) {
    let skip = 0;
    for (;;) {
      const jobs = (await queue.getFailed(skip, skip + PAGE - 1)).filter(Boolean);
      if (jobs.length === 0) break;
      for (const job of jobs) {
        result.failed++;
        const key = keyOf(job.data, fromTimer);
        if (!key) {
          result.unreadable++;
          skip++;
          continue;
        }
        const r = await enqueue(forKey(reconciles, key), key);
        if (r.outcome === 'added') result.added++;
        else result.merged++;
        // A job it cannot remove (taken by a retry meanwhile) stays; the next page starts after it.
        if (
          !(await job.remove().then(
            () => true,
            () => false,
          ))
        )
          skip++;
      }
    }
  }
  return result;
}
