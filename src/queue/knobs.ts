import type { Queue } from 'bullmq';
import type { RedisClient } from './connection.ts';
import { effectiveLimits, readOverrides, withLimitsLock, type Limits } from './overrides.ts';
import type { QueueConfig } from './settings.ts';
import { shareOf } from './shards.ts';

/** What the knobs need of a queue; structural, so queues of any job type fit. */
export type KnobbedQueue = Pick<
  Queue,
  'setGlobalConcurrency' | 'removeGlobalConcurrency' | 'getGlobalConcurrency' | 'setGlobalRateLimit' | 'removeGlobalRateLimit' | 'getGlobalRateLimit'
>;

export interface AppliedKnobs {
  globalConcurrency: number | null;
  globalRateLimit: { max: number; duration: number } | null;
}

/**
 * Makes the queue-wide limits stored in Redis match the config, declaratively: a limit that is unset in the
 * config is removed. Idempotent; call it at start and again after Redis lost its data (the limits live in
 * the queue's meta key). Returns what Redis holds afterwards.
 */
export async function applyQueueKnobs(queue: KnobbedQueue, cfg: Pick<QueueConfig, 'globalConcurrency' | 'globalRateLimit'>): Promise<AppliedKnobs> {
  if (cfg.globalConcurrency === undefined) await queue.removeGlobalConcurrency();
  else await queue.setGlobalConcurrency(cfg.globalConcurrency);
  if (cfg.globalRateLimit === undefined) await queue.removeGlobalRateLimit();
  else await queue.setGlobalRateLimit(cfg.globalRateLimit.max, cfg.globalRateLimit.durationMs);
  const [globalConcurrency, globalRateLimit] = await Promise.all([queue.getGlobalConcurrency(), queue.getGlobalRateLimit()]);
  return { globalConcurrency, globalRateLimit };
}

/**
 * One shard's part of queue-wide limits: BullMQ keeps them per queue, so with shards each shard's queue gets
 * a whole share, the shares adding up to the configured limit (`splitEvenly`).
 */
export function shardLimits(limits: Limits, shards: number, shard: number): Limits {
  const rate = limits.globalRateLimit;
  return {
    globalConcurrency: limits.globalConcurrency === undefined ? undefined : shareOf(limits.globalConcurrency, shards, shard),
    globalRateLimit: rate === undefined ? undefined : { max: shareOf(rate.max, shards, shard), durationMs: rate.durationMs },
  };
}

/** The limits of every shard's queue added up: what all workers together obey. */
function summed(applied: readonly AppliedKnobs[]): AppliedKnobs {
  const concurrency = applied.map((a) => a.globalConcurrency);
  const rates = applied.map((a) => a.globalRateLimit);
  return {
    globalConcurrency: concurrency.every((c) => c !== null) ? concurrency.reduce((a, b) => a + b, 0) : null,
    globalRateLimit: rates.every((r) => r !== null) && rates[0] ? { max: rates.reduce((a, r) => a + r.max, 0), duration: rates[0].duration } : null,
  };
}

/** `applyQueueKnobs` on the reconcile queue of every shard (indexed by shard), each with its share; returns the sum. */
export async function applyShardedKnobs(queues: readonly KnobbedQueue[], limits: Limits): Promise<AppliedKnobs> {
  return summed(await Promise.all(queues.map((q, shard) => applyQueueKnobs(q, shardLimits(limits, queues.length, shard)))));
}

/**
 * What the watcher runs at start and at every resync: the limits of its configuration, except where an
 * operator override (`ebb queue concurrency|rate-limit`, overrides.ts) says otherwise, split across the
 * shards' queues. Holds the limits lock so it never interleaves with an operator's change.
 */
export function applyLimitsWithOverrides(
  queues: KnobbedQueue | readonly KnobbedQueue[],
  client: RedisClient,
  cfg: Pick<QueueConfig, 'prefix' | 'globalConcurrency' | 'globalRateLimit'>,
): Promise<AppliedKnobs> {
  const list = Array.isArray(queues) ? (queues as readonly KnobbedQueue[]) : [queues as KnobbedQueue];
  return withLimitsLock(client, cfg.prefix, async () => applyShardedKnobs(list, effectiveLimits(cfg, await readOverrides(client, cfg.prefix))));
}
