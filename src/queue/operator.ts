import type { Queue } from 'bullmq';
import type { RedisClient } from './connection.ts';
import { enqueue } from './enqueue.ts';
import type { KnobbedQueue } from './knobs.ts';
import { validateKey, type ObjectKey } from './names.ts';
import { withLimitsLock, writeOverride, type LimitName, type RateLimit } from './overrides.ts';
import type { TimerData } from './timers.ts';

/**
 * What `ebb queue` changes at runtime. Every change lives in Redis, so running workers obey it at their next
 * job and no process's restart undoes it.
 */

/** A new value for one queue-wide limit: a value, `null` for no limit, or `'reset'` for the watcher's configuration. */
export type LimitChange = { limit: 'globalConcurrency'; value: number | null | 'reset' } | { limit: 'globalRateLimit'; value: RateLimit | null | 'reset' };

/**
 * Stores the override and applies it at once (under the limits lock, so a resync running now cannot undo
 * it). A reset only removes the override: the watcher re-applies its configured value at its next resync or
 * start.
 */
export async function changeLimit(queue: KnobbedQueue, client: RedisClient, prefix: string, change: LimitChange): Promise<void> {
  const name: LimitName = change.limit;
  await withLimitsLock(client, prefix, async () => {
    if (change.value === 'reset') {
      await writeOverride(client, prefix, name, undefined);
      return;
    }
    await writeOverride(client, prefix, name, change.value);
    if (change.limit === 'globalConcurrency') {
      if (change.value === null) await queue.removeGlobalConcurrency();
      else await queue.setGlobalConcurrency(change.value);
    } else if (change.value === null) await queue.removeGlobalRateLimit();
    else await queue.setGlobalRateLimit(change.value.max, change.value.durationMs);
  });
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
 * Retries every failed job as a fresh reconcile of its object: a reconcile job carries only the object's key
 * and re-reads live state, and a timer's only effect is such a reconcile, so enqueueing the key does what a
 * retry would, keeps one job per object (a retried old job would bypass the deduplication of a job enqueued
 * since) and starts with the full number of attempts. Each failed job is removed once its object is enqueued.
 */
export async function retryFailed(reconcile: ReconcileLike, timers: TimersLike): Promise<RetryFailedResult> {
  const result: RetryFailedResult = { failed: 0, added: 0, merged: 0, unreadable: 0 };
  for (const [queue, fromTimer] of [
    [reconcile, false],
    [timers, true],
  ] as const) {
    let skip = 0;
    for (;;) {
      const jobs = (await (queue as Queue).getFailed(skip, skip + PAGE - 1)).filter(Boolean);
      if (jobs.length === 0) break;
      for (const job of jobs) {
        result.failed++;
        const key = keyOf(job.data, fromTimer);
        if (!key) {
          result.unreadable++;
          skip++;
          continue;
        }
        const r = await enqueue(reconcile, key);
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
