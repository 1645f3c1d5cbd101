import type { RedisClient } from './connection.ts';
import { withKeyLock } from './key-lock.ts';
import { RECONCILE_QUEUE } from './names.ts';
import type { QueueConfig } from './settings.ts';

/**
 * Operator overrides of the queue-wide limits (`ebb queue concurrency`, `ebb queue rate-limit`), kept in Redis
 * next to the queue. The watcher applies the limits of its configuration at start and at every resync; an
 * override wins over that configuration until it is reset, so a limit changed at runtime survives a resync
 * and a restart of any process. Losing Redis loses the overrides with the queue.
 */

export interface RateLimit {
  readonly max: number;
  readonly durationMs: number;
}

/** Per limit: absent = the watcher's configuration applies; null = no limit; a value = that limit. */
export interface LimitOverrides {
  readonly globalConcurrency?: number | null;
  readonly globalRateLimit?: RateLimit | null;
}

export type Limits = Pick<QueueConfig, 'globalConcurrency' | 'globalRateLimit'>;

const FIELD = { globalConcurrency: 'concurrency', globalRateLimit: 'rate-limit' } as const;
export type LimitName = keyof typeof FIELD;
const NONE = 'none';

/** The Redis hash holding the overrides of a prefix's reconcile queue (same hash tag as its BullMQ keys). */
export function overridesKey(prefix: string): string {
  return `${prefix}:${RECONCILE_QUEUE}:ebb-limits`;
}

/** Held while reading and applying overrides, so an operator's change and a resync never interleave. */
export function limitsLockKey(prefix: string): string {
  return `${prefix}:${RECONCILE_QUEUE}:ebb-limits-lock`;
}

function positiveInt(text: string): number | undefined {
  return /^[1-9]\d{0,8}$/.test(text) ? Number(text) : undefined;
}

/** The stored form of one override. */
export function encodeOverride(value: number | RateLimit | null): string {
  if (value === null) return NONE;
  return typeof value === 'number' ? String(value) : `${value.max}/${value.durationMs}`;
}

/** The overrides out of the stored hash; a field it cannot read is ignored (the configuration applies). */
export function decodeOverrides(hash: Record<string, string>): LimitOverrides {
  const out: { globalConcurrency?: number | null; globalRateLimit?: RateLimit | null } = {};
  const c = hash[FIELD.globalConcurrency];
  if (c === NONE) out.globalConcurrency = null;
  else if (c !== undefined && positiveInt(c) !== undefined) out.globalConcurrency = positiveInt(c);
  const r = hash[FIELD.globalRateLimit];
  if (r === NONE) out.globalRateLimit = null;
  else if (r !== undefined) {
    const [max, durationMs] = r.split('/').map(positiveInt);
    if (max !== undefined && durationMs !== undefined) out.globalRateLimit = { max, durationMs };
  }
  return out;
}

/** The limits to apply: each override where there is one, the configuration elsewhere. */
export function effectiveLimits(cfg: Limits, overrides: LimitOverrides): Limits {
  const pick = <T>(override: T | null | undefined, configured: T | undefined): T | undefined => (override === undefined ? configured : (override ?? undefined));
  return {
    globalConcurrency: pick(overrides.globalConcurrency, cfg.globalConcurrency),
    globalRateLimit: pick(overrides.globalRateLimit, cfg.globalRateLimit),
  };
}

export async function readOverrides(client: RedisClient, prefix: string): Promise<LimitOverrides> {
  return decodeOverrides(await client.hgetall(overridesKey(prefix)));
}

/** Stores one override; `undefined` removes it (the configuration applies again). */
export async function writeOverride(client: RedisClient, prefix: string, limit: LimitName, value: number | RateLimit | null | undefined): Promise<void> {
  if (value === undefined) await client.hdel(overridesKey(prefix), FIELD[limit]);
  else await client.hset(overridesKey(prefix), FIELD[limit], encodeOverride(value));
}

/** Runs `fn` holding the limits lock of `prefix`. */
export function withLimitsLock<T>(client: RedisClient, prefix: string, fn: () => Promise<T>): Promise<T> {
  return withKeyLock(client, limitsLockKey(prefix), fn);
}
