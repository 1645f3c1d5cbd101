/**
 * Queue shards (opt-in, `EBB_QUEUE_SHARDS`): N copies of the queues, each under its own `{hash tag}`, so on a
 * Redis Cluster they live in N slots that can sit on different primaries. Every object belongs to exactly one
 * shard, fixed by a stable hash of its dedup id: its reconcile jobs and its timers are all there, so the
 * per-object guarantees of one queue (deduplication, one running job per object, the timer lock) hold per
 * shard unchanged. Pure functions only; the BullMQ wiring is in queues.ts.
 */
import { dedupId, type ObjectKey } from './names.ts';

/** The most shards a configuration may ask for. */
export const MAX_SHARDS = 64;

/**
 * FNV-1a (32 bit) over the id's UTF-16 code units (ids are ASCII: DNS names, '.' and '~'). Part of the queue
 * contract: changing it moves objects to other shards.
 */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The shard (0..shards-1) of a dedup id. One shard: always 0. */
export function shardOf(id: string, shards: number): number {
  if (!Number.isSafeInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    throw new RangeError(`shards must be an integer from 1 to ${MAX_SHARDS}, got ${shards}`);
  return shards === 1 ? 0 : fnv1a32(id) % shards;
}

/** The shard of an object: its reconcile jobs and its timers all live there. */
export function shardOfKey(key: ObjectKey, shards: number): number {
  return shardOf(dedupId(key), shards);
}

/** The entry of `perShard` (indexed by shard) that holds `key`. */
export function forKey<T>(perShard: readonly T[], key: ObjectKey): T {
  const item = perShard[shardOfKey(key, perShard.length)];
  if (item === undefined) throw new RangeError('no shards');
  return item;
}

const TAG = /\{([^{}]+)\}/;

/**
 * The BullMQ key prefix of a shard: shard 0 keeps the configured prefix (so one shard is exactly the keys of
 * an unsharded install), shard i > 0 appends `-i` inside the first hash tag: `{ebb}` → `{ebb-1}`, `{ebb-2}`.
 */
export function shardPrefix(prefix: string, shard: number): string {
  if (!Number.isSafeInteger(shard) || shard < 0 || shard >= MAX_SHARDS)
    throw new RangeError(`shard must be an integer from 0 to ${MAX_SHARDS - 1}, got ${shard}`);
  if (!TAG.test(prefix)) throw new RangeError(`prefix ${JSON.stringify(prefix)} has no {hash tag}`);
  return shard === 0 ? prefix : prefix.replace(TAG, (_, tag: string) => `{${tag}-${shard}}`);
}

/** The prefixes of every shard, indexed by shard. */
export function shardPrefixes(prefix: string, shards: number): string[] {
  return Array.from({ length: shards }, (_, i) => shardPrefix(prefix, i));
}

/**
 * `total` split into `parts` whole shares that differ by at most one and add up to `total` exactly (the
 * first shares take the remainder): a process's worker concurrency, the global concurrency and rate limit.
 * Every share is at least 1 only when total >= parts (the settings check that).
 */
export function splitEvenly(total: number, parts: number): number[] {
  const base = Math.floor(total / parts);
  return Array.from({ length: parts }, (_, i) => base + (i < total % parts ? 1 : 0));
}

/** The share of shard `shard` in `splitEvenly(total, parts)`. */
export function shareOf(total: number, parts: number, shard: number): number {
  return splitEvenly(total, parts)[shard] ?? 0;
}

/**
 * The Redis Cluster slot (0..16383) of a key: CRC16 (XMODEM) of its hash tag, or of the whole key without
 * one, modulo 16384 (the Cluster specification's HASH_SLOT). `ebb queue status` shows it per shard.
 */
export function clusterSlot(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
