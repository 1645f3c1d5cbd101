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
import { GONE, SET_CAPPED } from './scripts.ts';

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
  /** Whether `source`'s current list still counts: false once `forget` took it away (the source must relist). */
  listed(source: string): boolean;
  /** Keeps the sources' marks for VIEW_MARK_TTL_MS more: a watcher that stops keeping them (gone, hung) leaves no view trusted. */
  alive(): Promise<void>;
}

/** A source's view list was forgotten (Redis came back): the source relists, so that the view is whole again. */
export class ViewForgottenError extends Error {
  readonly code = 'ViewForgotten';
  constructor(source: string) {
    super(`the view of ${source} was forgotten (Redis came back); relisting`);
  }
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

/** Where each view write goes: a pod's under the cap (its mark naming list `listId`), the App's as it is. */
function addChange(m: Multi, prefix: string, c: Change, podCap: number, listId: string): void {
  const key = viewKey(prefix, c.namespace, c.app);
  const cap = c.field.startsWith(Field.podPrefix) ? String(podCap) : '';
  const mark = JSON.stringify({ l: listId, big: true });
  if (c.op === 'gone') m.eval(GONE, 1, key, c.field, c.value, cap, mark);
  else if (cap === '') m.hset(key, c.field, c.value);
  else m.eval(SET_CAPPED, 1, key, c.field, c.value, cap, mark);
}

/** The most pods one App's view holds by default (about 2 KiB each). */
export const VIEW_APP_PODS = 5000;

/** How the view is bounded: `limitBytes` the largest projection stored, `appPods` the most pods one App's hash holds. */
export interface ViewLimits {
  limitBytes?: number;
  appPods?: number;
}

/** The view written through `redis` under the queue prefix `prefix`, within `limits`. */
export function redisViewFeed(redis: RedisClient, prefix: string, limits: ViewLimits = {}): ViewFeed {
  const { limitBytes, appPods = VIEW_APP_PODS } = limits;
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
          for (const c of upsertChanges(kind, o, listId, limitBytes)) addChange(m, prefix, c, appPods, listId);
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
        for (const c of changes) addChange(m, prefix, c, appPods, listId);
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
    listed: (source) => current.has(source),
    forget: async () => {
      current.clear();
      oversized.clear();
      pending = [];
      await redis.del(lists);
    },
    alive: async () => {
      await redis.pexpire(lists, VIEW_MARK_TTL_MS);
    },
  };
}
