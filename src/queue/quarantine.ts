/**
 * Keys whose reconcile ends workers. A reconcile that starts counts its key in flight (one Redis hash)
 * and clears the count when it ends, whatever the outcome; reconciles of one key never overlap, so a count
 * found at a start is of earlier runs that never ended: their worker died (crashed, OOM-killed, or killed by its liveness
 * probe after a stall). At `limit` such runs the key is quarantined: its jobs are dropped until the object
 * changes (its generation) or an operator releases it. Redis loss forgets both, which only lets the key try
 * again. The hashes live under the queue prefix (its hash tag and the Redis ACL cover them).
 */
import type { RedisClient } from './connection.ts';
import { parseKey } from './names.ts';
import { shardOfKey, shardPrefix } from './shards.ts';

/** Earlier runs of one key that never ended, at which the key is quarantined. */
export const DEFAULT_QUARANTINE_LIMIT = 5;

/** Why and since when a key is held, and the generation it was held at (a new one releases it). */
export interface QuarantineRecord {
  since: string;
  unfinished: number;
  generation: number | undefined;
}

export interface QuarantineStore {
  /**
   * One round trip at the start of every run: the key's hold, if any, and the run marked started (how many
   * earlier runs never ended). A run that is then not reconciled (held) ends like any other.
   */
  begin(key: string): Promise<{ record: QuarantineRecord | undefined; unfinished: number }>;
  /** Marks a run of `key` started; resolves to how many earlier runs never ended. */
  started(key: string): Promise<number>;
  /** Marks the run ended (however it ended): no run of the key is in flight any more. */
  ended(key: string): Promise<void>;
  get(key: string): Promise<QuarantineRecord | undefined>;
  hold(key: string, record: QuarantineRecord): Promise<void>;
  /** Lifts the hold and forgets the unfinished runs. */
  release(key: string): Promise<boolean>;
  list(): Promise<Map<string, QuarantineRecord>>;
}

function parseRecord(text: string | null | undefined): QuarantineRecord | undefined {
  if (!text) return undefined;
  try {
    const r = JSON.parse(text) as Partial<QuarantineRecord>;
    return { since: String(r.since ?? ''), unfinished: Number(r.unfinished ?? 0), generation: typeof r.generation === 'number' ? r.generation : undefined };
  } catch {
    return undefined;
  }
}

export function redisQuarantine(client: RedisClient, prefix: string): QuarantineStore {
  const inflight = `${prefix}:inflight`;
  const held = `${prefix}:quarantine`;
  return {
    // Both commands written at once (one round trip); not a pipeline object, whose construction copies every
    // script the connection has defined.
    begin: async (key) => {
      const [text, count] = await Promise.all([client.hget(held, key), client.hincrby(inflight, key, 1)]);
      return { record: parseRecord(text), unfinished: count - 1 };
    },
    started: async (key) => (await client.hincrby(inflight, key, 1)) - 1,
    // Runs of one key never overlap, so a run that ended leaves none in flight: a lost `ended` (Redis away)
    // counts one unfinished run only until the next one ends.
    ended: async (key) => {
      await client.hdel(inflight, key);
    },
    get: async (key) => parseRecord(await client.hget(held, key)),
    hold: async (key, record) => {
      await client.hset(held, key, JSON.stringify(record));
    },
    release: async (key) => {
      const [[, removed]] = ((await client.multi().hdel(held, key).hdel(inflight, key).exec()) ?? [[null, 0]]) as [[unknown, number]];
      return removed > 0;
    },
    list: async () => {
      const all = await client.hgetall(held);
      const out = new Map<string, QuarantineRecord>();
      for (const [k, v] of Object.entries(all)) {
        const r = parseRecord(v);
        if (r) out.set(k, r);
      }
      return out;
    },
  };
}

/**
 * The quarantine of a sharded queue (`shards.ts`): each key's records live in its own shard's hash tag, so
 * the three commands every reconcile spends here go to the node of the shard that ran it. One shard: exactly
 * `redisQuarantine(client, prefix)`. Keys are `formatKey` strings.
 */
export function shardedQuarantine(client: RedisClient, prefix: string, shards: number): QuarantineStore {
  const stores = Array.from({ length: shards }, (_, i) => redisQuarantine(client, shardPrefix(prefix, i)));
  if (shards === 1 && stores[0]) return stores[0];
  const of = (key: string): QuarantineStore => stores[shardOfKey(parseKey(key), shards)] ?? (stores[0] as QuarantineStore);
  return {
    started: (key) => of(key).started(key),
    begin: (key) => of(key).begin(key),
    ended: (key) => of(key).ended(key),
    get: (key) => of(key).get(key),
    hold: (key, record) => of(key).hold(key, record),
    release: (key) => of(key).release(key),
    list: async () => new Map((await Promise.all(stores.map((s) => s.list()))).flatMap((m) => [...m])),
  };
}
