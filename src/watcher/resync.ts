/**
 * What a periodic resync enqueues. A resync exists to heal what no event announces: a job lost with Redis,
 * a job that failed for good, drift in what the reconcile reads but nobody watches. Enqueueing every known
 * object each period does that, but under scale to zero it also wakes a worker every period for a fleet
 * with nothing to do. So most resyncs are light: they enqueue the objects last seen not settled
 * (`appSettled`) and those whose job failed since the previous resync; a full resync (everything) runs
 * every FULL_RESYNC_EVERY periods, and at once when Redis lost its data (the marker this module keeps in
 * Redis is gone).
 */
import type { RedisClient } from '../queue/connection.ts';
import { formatKey, keyFromDedupId } from '../queue/names.ts';

/** Every this many periods the resync enqueues every known object (with the defaults: hourly). */
export const FULL_RESYNC_EVERY = 6;

/** Whether resync number `round` (1, 2, ...) is full: every FULL_RESYNC_EVERY-th, or after a Redis loss. */
export function resyncIsFull(round: number, redisKeptData: boolean): boolean {
  return !redisKeptData || (round > 0 && round % FULL_RESYNC_EVERY === 0);
}

/** The `formatKey` form of the object of a reconcile job id (`<dedupId>.<random>`); undefined for others. */
export function jobObjectKey(jobId: string): string | undefined {
  const dot = jobId.lastIndexOf('.');
  if (dot <= 0) return undefined;
  try {
    return formatKey(keyFromDedupId(jobId.slice(0, dot)));
  } catch {
    return undefined;
  }
}

/** The keys a resync enqueues, each once: all of them when full; else the unsettled and failed known ones. */
export function resyncKeys(plan: { full: boolean; all: readonly string[]; unsettled: readonly string[]; failedJobIds: readonly string[] }): string[] {
  if (plan.full) return [...plan.all];
  const known = new Set(plan.all);
  const keys = new Set(plan.unsettled);
  for (const id of plan.failedJobIds) {
    const k = jobObjectKey(id);
    if (k !== undefined && known.has(k)) keys.add(k);
  }
  return [...keys];
}

/** At most this many failed jobs are read per resync (BullMQ keeps `EBB_QUEUE_REMOVE_ON_FAIL` of them). */
const MAX_FAILED = 10_000;

/** Ids of the jobs in the queue's failed set that finished at or after `since` (epoch ms; the set's score). */
export async function failedJobIdsSince(redis: RedisClient, failedKey: string, since: number): Promise<string[]> {
  return redis.zrangebyscore(failedKey, since, '+inf', 'LIMIT', 0, MAX_FAILED);
}

/**
 * The Redis-loss marker: written at start and after every full resync; a resync that finds it gone knows
 * that Redis lost its data (a flush, or a restart without persistence) and with it perhaps jobs, so it runs
 * full.
 */
export async function markerPresent(redis: RedisClient, key: string): Promise<boolean> {
  return (await redis.exists(key)) === 1;
}

export async function writeMarker(redis: RedisClient, key: string, now: number = Date.now()): Promise<void> {
  await redis.set(key, String(now));
}
