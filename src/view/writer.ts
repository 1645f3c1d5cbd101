/**
 * The watcher's side of the view: each list page and watch event of the App and pod sources becomes one MULTI
 * of field writes (`changes.ts`), sent before the keys it concerns are enqueued, so a job's view is at least as
 * new as the event that caused it. A source's list is marked complete (its id in the lists hash) in the MULTI
 * of its last page; a new list takes the mark away in the MULTI of its first page, and entries of an older list
 * are not trusted (pods deleted while nothing watched stay behind, unread, until their App goes).
 */
import { randomBytes } from 'node:crypto';
import { errorMessage } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import { sleep } from '../common/wait.ts';
import type { OversizedObject } from '../kube/paged-list.ts';
import type { KubeObject } from '../kube/types.ts';
import type { WatchEvent } from '../kube/watch.ts';
import type { RedisClient } from '../queue/connection.ts';
import { deleteChanges, upsertChanges, type Change, type ViewKind } from './changes.ts';
import { Field, listsKey, oversizedPodField, viewKey } from './keys.ts';

/** The watch sources' end of the view (`Sink.view`). */
export interface ViewFeed {
  /** A new list starts: the id its entries are written under. */
  newList(): string;
  /** Writes a list page of `source` (list `listId`); the first takes the source's complete mark away, the last sets it. */
  page(source: string, kind: ViewKind, listId: string, items: readonly KubeObject[], page: { first: boolean; last: boolean }): Promise<void>;
  /** Writes a watch event of `source`. */
  event(source: string, kind: ViewKind, ev: WatchEvent<KubeObject>): Promise<void>;
  /** An object the watcher left out for its size: its App reads fresh until it is seen again at a size the watcher reads. */
  tooLarge(source: string, kind: ViewKind, obj: OversizedObject): void;
  /** Nothing in the view is trusted from now on (Redis came back and may have lost writes): every source's mark goes. */
  forget(): Promise<void>;
  /** Keeps the sources' marks for VIEW_MARK_TTL_MS more: a watcher that stops keeping them (gone, hung) leaves no view trusted. */
  alive(): Promise<void>;
}

/** How long the sources' marks outlive the watcher's last sign of life, and how often it gives one. */
export const VIEW_MARK_TTL_MS = 30_000;
const VIEW_ALIVE_EVERY_MS = 10_000;

/** Forgets what an earlier watcher marked, then keeps the marks alive until `signal` aborts. */
export async function keepViewAlive(view: ViewFeed, signal: AbortSignal, log: Logger): Promise<void> {
  await view.forget().catch((err: unknown) => log.warn({ err: errorMessage(err) }, 'could not clear the view marks; the first lists do'));
  while (!signal.aborted) {
    await view.alive().catch(() => undefined);
    await sleep(VIEW_ALIVE_EVERY_MS, signal).catch(() => undefined);
  }
}

type Multi = ReturnType<RedisClient['multi']>;

/**
 * Sets a tombstone (ARGV), then removes the hash when its App is gone (its entry a tombstone) and no field holds
 * a live pod (an entry with an object): ebb's write records and other tombstones go with it. Entries are told
 * apart by how `entry.ts` starts them, `{"l":"<id>","gone":` and `{"l":"<id>","o":`.
 */
const GONE = `redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local app = redis.call('HGET', KEYS[1], 'a')
if not app or not string.find(app, '^{"l":"[^"]*","gone":') then return 0 end
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do
  if string.find(v, '^{"l":"[^"]*","o":') then return 0 end
end
return redis.call('DEL', KEYS[1])`;

function addChange(m: Multi, prefix: string, c: Change): void {
  const key = viewKey(prefix, c.namespace, c.app);
  if (c.op === 'set') m.hset(key, c.field, c.value);
  else m.eval(GONE, 1, key, c.field, c.value);
}

/** The view written through `redis` under the queue prefix `prefix`; `limitBytes`: the largest projection stored. */
export function redisViewFeed(redis: RedisClient, prefix: string, limitBytes?: number): ViewFeed {
  const lists = listsKey(prefix);
  const current = new Map<string, string>();
  // Pods left out for their size, by `namespace/name` (their App is unknown: their namespace reads fresh).
  const oversized = new Set<string>();
  // Writes decided outside a MULTI (a pod left out for its size), sent with the next one, before anything after.
  let pending: ((m: Multi) => void)[] = [];
  const send = async (fill: (m: Multi) => void): Promise<void> => {
    const m = redis.multi();
    const before = pending;
    for (const p of before) p(m);
    fill(m);
    await m.exec();
    pending = pending.filter((p) => !before.includes(p));
  };
  const seenPod = (m: Multi, obj: KubeObject): void => {
    const id = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
    if (!oversized.delete(id)) return;
    m.hdel(lists, oversizedPodField(obj.metadata?.namespace ?? '', obj.metadata?.name ?? ''));
  };
  return {
    newList: () => randomBytes(6).toString('hex'),
    page: async (source, kind, listId, items, page) => {
      await send((m) => {
        if (page.first) m.hdel(lists, source);
        for (const o of items) {
          if (kind === 'pod') seenPod(m, o);
          for (const c of upsertChanges(kind, o, listId, limitBytes)) addChange(m, prefix, c);
        }
        if (page.last) m.hset(lists, source, listId).pexpire(lists, VIEW_MARK_TTL_MS);
      });
      if (page.first) current.set(source, listId);
    },
    event: async (source, kind, ev) => {
      const listId = current.get(source) ?? '';
      await send((m) => {
        if (kind === 'pod') seenPod(m, ev.object);
        const changes = ev.type === 'DELETED' ? deleteChanges(kind, ev.object, listId) : upsertChanges(kind, ev.object, listId, limitBytes);
        for (const c of changes) addChange(m, prefix, c);
      });
    },
    tooLarge: (source, kind, obj) => {
      const namespace = obj.namespace ?? '';
      const listId = current.get(source) ?? '';
      if (kind === 'app') {
        pending.push((m) => m.hset(viewKey(prefix, namespace, obj.name), Field.app, JSON.stringify({ l: listId, big: true })));
        return;
      }
      oversized.add(`${namespace}/${obj.name}`);
      pending.push((m) => m.hset(lists, oversizedPodField(namespace, obj.name), '1'));
    },
    forget: async () => {
      oversized.clear();
      pending = [];
      await redis.del(lists);
    },
    alive: async () => {
      await redis.pexpire(lists, VIEW_MARK_TTL_MS);
    },
  };
}
