/** The workers' end of the view in Redis: one round trip reads an App's hash with the lists hash; ebb's writes are recorded in it. */
import type { RedisClient } from '../queue/connection.ts';
import type { RawView } from './freshness.ts';
import { listsKey, viewKey } from './keys.ts';

export interface ViewStore {
  /** App `namespace/name`'s hash and the lists hash, in one MULTI; undefined when the App has no hash. */
  read(namespace: string, name: string): Promise<RawView | undefined>;
  /** Sets `field` of App `namespace/name`'s hash (a record of ebb's write, or of a fresh list). */
  record(namespace: string, name: string, field: string, value: string): Promise<void>;
}

type Reply = [Error | null, unknown][] | null;

function hash(reply: Reply, i: number): Record<string, string> {
  const r = reply?.[i];
  if (!r || r[0]) throw r?.[0] ?? new Error('the view read was not answered');
  return r[1] as Record<string, string>;
}

export function redisViewStore(redis: RedisClient, prefix: string): ViewStore {
  const lists = listsKey(prefix);
  return {
    read: async (namespace, name) => {
      const reply: Reply = await redis
        .multi()
        .hgetall(viewKey(prefix, namespace, name))
        .hgetall(lists)
        .exec();
      const fields = hash(reply, 0);
      return Object.keys(fields).length === 0 ? undefined : { fields, lists: hash(reply, 1) };
    },
    record: async (namespace, name, field, value) => {
      await redis.hset(viewKey(prefix, namespace, name), field, value);
    },
  };
}
