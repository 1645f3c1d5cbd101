/**
 * The watcher's side of the view: each list page and watch event of the App and pod sources becomes one atomic
 * write of field writes (`changes.ts`: one command, or a MULTI of several), sent before the keys it concerns are
 * enqueued, so a job's view is at least as new as the event that caused it. A source's list is marked complete
 * (its id in the lists hash) in the write of its last page; a new list takes the mark away in the write of its
 * first page, and entries of an older list are not trusted (pods deleted while nothing watched stay behind,
 * unread, until their App goes).
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

/** One Redis command of a view write: its name and arguments. */
type Command = [name: 'hset' | 'hdel' | 'eval' | 'pexpire', ...args: (string | number)[]];

/** Where each view write goes: a pod's under the cap (its mark naming list `listId`), the App's as it is. */
function changeCommand(prefix: string, c: Change, podCap: number, listId: string): Command {
  const key = viewKey(prefix, c.namespace, c.app);
  const cap = c.field.startsWith(Field.podPrefix) ? String(podCap) : '';
  const mark = JSON.stringify({ l: listId, big: true });
  if (c.op === 'gone') return ['eval', GONE, 1, key, c.field, c.value, cap, mark];
  if (cap === '') return ['hset', key, c.field, c.value];
  return ['eval', SET_CAPPED, 1, key, c.field, c.value, cap, mark];
}

/**
 * Sends one write's commands atomically: a single command as it is (a script or one HSET is atomic in Redis),
 * several in a MULTI. Most watch events change one field, and a MULTI costs the watcher more than its command.
 */
async function sendAtomically(redis: RedisClient, commands: readonly Command[]): Promise<void> {
  const [only] = commands;
  if (commands.length === 1 && only) {
    const [name, ...args] = only;
    await redis.call(name, ...args);
    return;
  }
  if (commands.length === 0) return;
  const m = redis.multi();
  for (const [name, ...args] of commands) m.call(name, ...args);
  // A command that failed inside the MULTI fails the write, as a lone command's error does: not enqueued over it.
  const failed = (await m.exec())?.find(([err]) => err !== null)?.[0];
  if (failed) throw failed;
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
  // Writes decided outside an event (a pod left out for its size), sent with the next one, before anything after.
  let pending: Command[] = [];
  const send = async (fill: (out: Command[]) => void): Promise<void> => {
    const before = pending;
    const commands = [...before];
    fill(commands);
    await sendAtomically(redis, commands);
    pending = pending.filter((p) => !before.includes(p));
  };
  const seenPod = (out: Command[], obj: KubeObject): void => {
    const id = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
    if (!oversized.delete(id)) return;
    out.push(['hdel', lists, oversizedPodField(obj.metadata?.namespace ?? '', obj.metadata?.name ?? '')]);
  };
  return {
    newList: () => randomBytes(6).toString('hex'),
    page: async (source, kind, listId, items, page) => {
      await send((out) => {
        if (page.first) out.push(['hdel', lists, source]);
        for (const o of items) {
          if (kind === 'pod') seenPod(out, o);
          for (const c of upsertChanges(kind, o, listId, limitBytes)) out.push(changeCommand(prefix, c, appPods, listId));
        }
        if (page.last) out.push(['hset', lists, source, listId], ['pexpire', lists, VIEW_MARK_TTL_MS]);
      });
      if (page.first) current.set(source, listId);
    },
    event: async (source, kind, ev) => {
      const listId = current.get(source) ?? '';
      await send((out) => {
        if (kind === 'pod') seenPod(out, ev.object);
        const changes = ev.type === 'DELETED' ? deleteChanges(kind, ev.object, listId) : upsertChanges(kind, ev.object, listId, limitBytes);
        for (const c of changes) out.push(changeCommand(prefix, c, appPods, listId));
      });
    },
    tooLarge: (source, kind, obj) => {
      const namespace = obj.namespace ?? '';
      const listId = current.get(source) ?? '';
      if (kind === 'app') {
        pending.push(['hset', viewKey(prefix, namespace, obj.name), Field.app, JSON.stringify({ l: listId, big: true })]);
        return;
      }
      oversized.add(`${namespace}/${obj.name}`);
      pending.push(['hset', lists, oversizedPodField(namespace, obj.name), '1']);
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
