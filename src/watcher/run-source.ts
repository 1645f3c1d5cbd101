/**
 * One source's supervised list→watch loop (`listWatch`), feeding its keys to the sink. An enqueue that fails
 * (Redis unreachable) is retried, with backoff, for the same page or event: never a relist of everything. An
 * object too large to read is skipped and reported (`Sink.onTooLarge`); an App left out so is as good as absent.
 */
import { backoffMs } from '../common/backoff.ts';
import type { Logger } from '../common/log.ts';
import { sleep } from '../common/wait.ts';
import type { OversizedObject } from '../kube/paged-list.ts';
import type { KubeRest } from '../kube/rest.ts';
import type { KubeObject } from '../kube/types.ts';
import { listWatch, type WatchEvent } from '../kube/watch.ts';
import { ViewForgottenError } from '../view/writer.ts';
import { formatKey, type ObjectKey } from '../queue/names.ts';
import { metaFingerprint } from './fingerprint.ts';
import { filterPodEvent, objectId } from './pod-filter.ts';
import { knownValue, type KnownKeys } from './known-keys.ts';
import type { Sink, SourceSpec, SourceState } from './source-spec.ts';
import type { AppObserver } from './warm-pools.ts';

/** Objects per list page of a watcher source (fewer when a page is over WATCH_PAGE_BYTES). */
export const WATCH_PAGE_SIZE = 50;
/**
 * Byte cap of one list page, of one object and of one watch event in the watcher: an answer is held twice
 * while parsed (text and objects), and the manifest's 64 MiB heap holds several sources' pages at once.
 */
export const WATCH_OBJECT_BYTES = 1024 * 1024;
/** Backoff of an enqueue retried in place. */
const ENQUEUE_BACKOFF = { baseMs: 200, capMs: 10_000 };

/**
 * The distinct keys of a list page, in one pass; a tracked source also records each key's fingerprint, a
 * digesting source each object's digest.
 */
function pageKeys(objs: KubeObject[], spec: SourceSpec, listed: Map<string, number>, digests: Map<string, number>): ObjectKey[] {
  const seen = new Map<string, ObjectKey>();
  for (const o of objs) {
    for (const r of spec.relatedKeys?.(o) ?? []) seen.set(formatKey(r), r);
    const k = spec.keyOf(o);
    if (!k) continue;
    if (spec.digestOf) digests.set(objectId(o), spec.digestOf(o));
    const ks = formatKey(k);
    seen.set(ks, k);
    if (spec.tracked) listed.set(ks, knownValue(metaFingerprint(o), spec.settledOf?.(o) ?? true));
  }
  return [...seen.values()];
}

function observeStates(spec: SourceSpec, states: AppObserver, objs: readonly KubeObject[]): void {
  for (const o of objs) {
    const k = spec.keyOf(o);
    if (k) states.seen(formatKey(k), o);
  }
}

/** After a relist: Apps of this source's namespace that the list no longer holds are gone. */
function retainListed(spec: SourceSpec, states: AppObserver, listed: Map<string, number>): void {
  const ns = spec.ref.namespace;
  states.retain((k) => listed.has(k) || (ns !== undefined && !k.startsWith(`App ${ns}/`)));
}

/** An object of `spec` left out for its size: reported, and a tracked object is forgotten (left alone). */
function skipOversized(spec: SourceSpec, sink: Sink, digests: Map<string, number>, obj: OversizedObject): void {
  sink.onTooLarge(spec.ref, obj);
  if (spec.view) sink.view?.tooLarge(spec.name, spec.view, obj);
  const id = `${obj.namespace ?? ''}/${obj.name}`;
  digests.delete(id);
  const key = spec.keyOf({ metadata: { name: obj.name, namespace: obj.namespace, uid: obj.uid } });
  if (!key || !spec.tracked) return;
  sink.known.delete(spec.name, key);
  spec.states?.gone(formatKey(key));
}

/**
 * `sink.enqueue`, retried with capped backoff until it is taken (or the source stops): the page or event waits,
 * the watch stays where it is. The source reads `backoff` meanwhile.
 */
async function enqueueUntilTaken(
  sink: Sink,
  work: { keys: ObjectKey[]; cause: 'list' | 'event'; before?: (() => Promise<void>) | undefined },
  deps: { signal: AbortSignal; setState(s: SourceState): void; log: Logger },
  state: { current: SourceState },
): Promise<void> {
  const { keys, cause, before } = work;
  for (let attempt = 1; ; attempt++) {
    try {
      await before?.();
      await sink.enqueue(keys, cause);
      if (attempt > 1) deps.setState(state.current);
      return;
    } catch (err) {
      if (deps.signal.aborted) throw err;
      deps.setState('backoff');
      if (attempt === 1) deps.log.warn({ keys: keys.length, cause }, 'enqueue failed; retrying the same keys');
      await sleep(backoffMs(attempt, ENQUEUE_BACKOFF.baseMs, ENQUEUE_BACKOFF.capMs), deps.signal);
    }
  }
}

/** Updates the known keys for a tracked source's event; false when the event needs no reconcile. */
function trackEvent(spec: SourceSpec, known: KnownKeys, ev: WatchEvent<KubeObject>, key: ObjectKey): boolean {
  if (ev.type === 'DELETED') {
    known.delete(spec.name, key);
    return true;
  }
  const changed = known.record(spec.name, key, metaFingerprint(ev.object), spec.settledOf?.(ev.object) ?? true);
  return changed || ev.type !== 'MODIFIED' || spec.ignoreStatusOnly !== true;
}

/**
 * Runs one supervised list→watch loop and feeds its keys to the sink. After every (re)list all keys are
 * enqueued, because events may have been missed while the watch was down. ImageLists are listed and watched
 * as metadata only, Apps in full (for their settled bit), pods in full (for their digest), page by page;
 * only a number per key (and per pod) is kept, never the objects.
 */
export async function runSource(
  spec: SourceSpec,
  deps: { rest: KubeRest; sink: Sink; log: Logger; signal: AbortSignal; watchdogMs: number; setState(s: SourceState): void },
): Promise<void> {
  const { sink } = deps;
  const state: { current: SourceState } = { current: 'starting' };
  const enqueue = (keys: ObjectKey[], cause: 'list' | 'event', before?: () => Promise<void>): Promise<void> =>
    enqueueUntilTaken(sink, { keys, cause, before }, deps, state);
  // The shared view: written before the keys an object concerns are enqueued (the same retries), every event
  // written, those that enqueue nothing too (a job caused by a later event reads them).
  const view = spec.view && sink.view ? { feed: sink.view, kind: spec.view } : undefined;
  let viewList = '';
  /** Counts the event, and writes it to the view first (every event, those that enqueue nothing too). */
  /** A view forgotten since this source's list (Redis came back) is made whole by a relist: thrown, listWatch relists. */
  const relistIfForgotten = (): void => {
    if (view && !view.feed.listed(spec.name)) throw new ViewForgottenError(spec.name);
  };
  const seen = async (ev: WatchEvent<KubeObject>, resource: string): Promise<void> => {
    sink.onWatchEvent(resource, ev.type);
    relistIfForgotten();
    if (view) await enqueue([], 'event', () => view.feed.event(spec.name, view.kind, ev));
  };
  let lists = 0;
  let listed = new Map<string, number>();
  // Digesting sources: the digest per object, as of the last list and the events since.
  let digests = new Map<string, number>();
  let listedDigests = new Map<string, number>();
  let objects = 0;
  await listWatch<KubeObject>(
    {
      rest: deps.rest,
      ref: spec.ref,
      labelSelector: spec.labelSelector,
      signal: deps.signal,
      log: deps.log,
      watchdogMs: deps.watchdogMs,
      pageSize: WATCH_PAGE_SIZE,
      pageBytes: WATCH_OBJECT_BYTES,
      eventBytes: WATCH_OBJECT_BYTES,
      metadataOnly: spec.settledOf === undefined && spec.digestOf === undefined,
    },
    {
      onState: (s) => {
        state.current = s;
        deps.setState(s);
      },
      onTooLarge: (obj) => skipOversized(spec, sink, digests, obj),
      onListPage: async (items, page) => {
        if (!page.first) relistIfForgotten();
        if (page.first) {
          if (lists++ > 0) sink.onRestart(spec.name);
          viewList = view?.feed.newList() ?? '';
          listed = new Map();
          listedDigests = new Map();
          objects = 0;
        }
        const keys = pageKeys(items, spec, listed, listedDigests);
        objects += items.length;
        if (spec.states) observeStates(spec, spec.states, items);
        await enqueue(keys, 'list', view && (() => view.feed.page(spec.name, view.kind, viewList, items, page)));
        if (!page.last) return;
        if (spec.states) retainListed(spec, spec.states, listed);
        if (spec.tracked) sink.known.replace(spec.name, listed);
        if (spec.digestOf) digests = listedDigests;
        deps.log.info({ objects, keys: spec.tracked ? listed.size : undefined }, 'listed');
        listed = new Map();
        listedDigests = new Map();
      },
      onEvent: async (ev: WatchEvent<KubeObject>) => {
        const resource = spec.name.split('/')[0] ?? spec.name;
        await seen(ev, resource);
        const key = spec.keyOf(ev.object);
        if (!key) {
          digests.delete(objectId(ev.object));
          const related = spec.relatedKeys?.(ev.object, ev.type) ?? [];
          if (related.length > 0) await enqueue(related, 'event');
          return;
        }
        if (spec.releasesPodHolds) sink.holds.appEvent(key);
        if (spec.states) {
          if (ev.type === 'DELETED') spec.states.gone(formatKey(key));
          else observeStates(spec, spec.states, [ev.object]);
        }
        if (spec.tracked && !trackEvent(spec, sink.known, ev, key)) {
          sink.onIgnored(resource, 'status-only');
          return;
        }
        if (spec.digestOf && !filterPodEvent({ digestOf: spec.digestOf, ownerSource: spec.ownerSource, resource }, sink, digests, ev, key)) return;
        await enqueue([key, ...(spec.relatedKeys?.(ev.object, ev.type) ?? [])], 'event');
      },
    },
  );
}
