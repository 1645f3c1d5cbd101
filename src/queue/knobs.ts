import type { Queue } from 'bullmq';
import type { RedisClient } from './connection.ts';
import { effectiveLimits, readOverrides, withLimitsLock } from './overrides.ts';
import type { QueueConfig } from './settings.ts';

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
 * What the watcher runs at start and at every resync: the limits of its configuration, except where an
 * operator override (`ebb queue concurrency|rate-limit`, overrides.ts) says otherwise. Holds the limits lock
 * so it never interleaves with an operator's change.
 */
export function applyLimitsWithOverrides(
  queue: KnobbedQueue,
  client: RedisClient,
  cfg: Pick<QueueConfig, 'prefix' | 'globalConcurrency' | 'globalRateLimit'>,
): Promise<AppliedKnobs> {
  return withLimitsLock(client, cfg.prefix, async () => applyQueueKnobs(queue, effectiveLimits(cfg, await readOverrides(client, cfg.prefix))));
}
