/**
 * The records of quarantine (`src/workers/quarantine.ts`): per key, the runs that started and never ended (their
 * worker died: crashed, OOM-killed, or killed by its liveness probe after a stall), how many of those ran alone on
 * their worker, and the hold. Reconciles of one key never overlap, so a count found at a start is of earlier runs
 * that never ended. A run that ran beside others says little about its key (any co-runner may have killed the
 * worker); a run that ran alone and never ended is evidence against its key. Redis loss forgets everything, which
 * only lets the key try again. The hashes live under the queue prefix (its hash tag and the Redis ACL cover them).
 */
import type { RedisClient } from './connection.ts';
import { parseKey } from './names.ts';
import { shardOfKey, shardPrefix } from './shards.ts';

/** Runs of one key killed while running alone on their worker, in a row, at which the key is held. */
export const DEFAULT_QUARANTINE_LIMIT = 3;

/** Why, since when and until when a key is held. */
export interface QuarantineRecord {
  since: string;
  /** Runs of the key that never ended when it was (last) held. */
  unfinished: number;
  /** The object's generation when it was held (information only: a new generation does not release it). */
  generation: number | undefined;
  /** How many times the key was held in a row: 1, then one more for each retry that was killed again. */
  strikes?: number | undefined;
  /** When the key is retried (alone) by itself; absent: only an operator's release lets it run again. */
  retryAt?: string | undefined;
}

/** What a run finds at its start. */
export interface QuarantineStart {
  record: QuarantineRecord | undefined;
  /** Earlier runs that never ended. */
  unfinished: number;
  /** Of those, the ones that ran alone on their worker. */
  unfinishedAlone: number;
  /** An operator released the key since its last run (the hold's report is still to be withdrawn). */
  released: boolean;
}

export interface QuarantineStore {
  /** One round trip at the start of every run: the key's hold, if any, and the run marked started. */
  begin(key: string): Promise<QuarantineStart>;
  /** Marks a run of `key` started; resolves to how many earlier runs never ended. */
  started(key: string): Promise<number>;
  /** Marks the started run as running alone on its worker. */
  alone(key: string): Promise<void>;
  /** Marks the run ended (however it ended): no run of the key is in flight any more. */
  ended(key: string): Promise<void>;
  get(key: string): Promise<QuarantineRecord | undefined>;
  hold(key: string, record: QuarantineRecord): Promise<void>;
  /** Lifts the hold and forgets the unfinished runs; the key's next run withdraws the hold's report. */
  release(key: string): Promise<boolean>;
  /** Forgets a release once its report is withdrawn (or any hold, without a trace). */
  forget(key: string): Promise<void>;
  list(): Promise<Map<string, QuarantineRecord>>;
}

/** The hold's place after an operator's release, until the key's next run withdraws the report. */
const RELEASED = '"released"';
const aloneField = (key: string): string => `alone ${key}`;

function parseRecord(text: string | null | undefined): QuarantineRecord | undefined {
  if (!text || text === RELEASED) return undefined;
  try {
    const r = JSON.parse(text) as Partial<QuarantineRecord>;
    // A hold written before holds had retries (a change to the object lifted it then): retried at once.
    const legacy = typeof r.strikes !== 'number';
    return {
      since: String(r.since ?? ''),
      unfinished: Number(r.unfinished ?? 0),
      generation: typeof r.generation === 'number' ? r.generation : undefined,
      strikes: legacy ? 1 : r.strikes,
      retryAt: legacy ? String(r.since ?? '') : typeof r.retryAt === 'string' ? r.retryAt : undefined,
    };
  } catch {
    return undefined;
  }
}

export function redisQuarantine(client: RedisClient, prefix: string): QuarantineStore {
  const inflight = `${prefix}:inflight`;
  const held = `${prefix}:quarantine`;
  return {
    // The commands written at once (one round trip); not a pipeline object, whose construction copies every
    // script the connection has defined.
    begin: async (key) => {
      const [text, count, alone] = await Promise.all([client.hget(held, key), client.hincrby(inflight, key, 1), client.hget(inflight, aloneField(key))]);
      return { record: parseRecord(text), unfinished: count - 1, unfinishedAlone: Number(alone ?? 0), released: text === RELEASED };
    },
    started: async (key) => (await client.hincrby(inflight, key, 1)) - 1,
    alone: async (key) => {
      await client.hincrby(inflight, aloneField(key), 1);
    },
    // Runs of one key never overlap, so a run that ended leaves none in flight: a lost `ended` (Redis away)
    // counts one unfinished run only until the next one ends.
    ended: async (key) => {
      await client.hdel(inflight, key, aloneField(key));
    },
    get: async (key) => parseRecord(await client.hget(held, key)),
    hold: async (key, record) => {
      await client.hset(held, key, JSON.stringify(record));
    },
    release: async (key) => {
      const was = parseRecord(await client.hget(held, key));
      if (!was) return false;
      await client.multi().hset(held, key, RELEASED).hdel(inflight, key, aloneField(key)).exec();
      return true;
    },
    forget: async (key) => {
      await client.hdel(held, key);
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
 * the commands every reconcile spends here go to the node of the shard that ran it. One shard: exactly
 * `redisQuarantine(client, prefix)`. Keys are `formatKey` strings.
 */
export function shardedQuarantine(client: RedisClient, prefix: string, shards: number): QuarantineStore {
  const stores = Array.from({ length: shards }, (_, i) => redisQuarantine(client, shardPrefix(prefix, i)));
  if (shards === 1 && stores[0]) return stores[0];
  const of = (key: string): QuarantineStore => stores[shardOfKey(parseKey(key), shards)] ?? (stores[0] as QuarantineStore);
  return {
    started: (key) => of(key).started(key),
    begin: (key) => of(key).begin(key),
    alone: (key) => of(key).alone(key),
    ended: (key) => of(key).ended(key),
    get: (key) => of(key).get(key),
    hold: (key, record) => of(key).hold(key, record),
    release: (key) => of(key).release(key),
    forget: (key) => of(key).forget(key),
    list: async () => new Map((await Promise.all(stores.map((s) => s.list()))).flatMap((m) => [...m])),
  };
}
