import type { Readable } from 'node:stream';
import { backoffMs } from '../common/backoff.ts';
import { AbortedError, sleep } from '../common/wait.ts';
import type { Logger } from '../common/log.ts';
import { kubeErrorFromStatus, isKubeError, unavailable } from './errors.ts';
import { resourcePath, type ResourceRef } from './paths.ts';
import { ACCEPT_METADATA, ACCEPT_METADATA_LIST, type KubeRest } from './rest.ts';
import { cappedLines } from './capped-lines.ts';
import { PagedList, type FetchPage, type OversizedObject } from './paged-list.ts';
import { errorMessage } from '../common/errors.ts';
import type { KubeObject } from './types.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

/** Thrown out of a handler: the consumer could not take the event, so the loop re-lists to recover it. */
class HandlerError extends Error {
  override readonly name = 'HandlerError';
}

async function runHandler(fn: () => void | Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    throw new HandlerError(errorMessage(err), { cause: err });
  }
}

export interface ListWatchHandlers<T> {
  /** Called with the full list after every (re)list: at start, after 410 Gone, after a consumer failure. */
  onList?(items: T[], resourceVersion: string): void | Promise<void>;
  /**
   * Called per page of a (re)list instead of holding the whole list in memory (large collections); `last`
   * marks the final page, whose resourceVersion the watch continues from.
   */
  onListPage?(items: T[], page: { first: boolean; last: boolean; resourceVersion: string }): void | Promise<void>;
  /**
   * Called for every watch event, in order; the next event waits until this resolves. A handler that
   * throws makes the loop back off and re-list, so nothing the handler failed to take is lost.
   */
  onEvent(event: WatchEvent<T>): void | Promise<void>;
  /**
   * An object left out for its size: a list page of it alone was over `pageBytes`, or its watch event over
   * `eventBytes`. Without this hook such an object fails the list (a watch event is still skipped).
   * `event` is the watch event's type, undefined for a list.
   */
  onTooLarge?(object: OversizedObject, event?: string): void | Promise<void>;
  /** Observability hook: state changes of the loop. */
  onState?(state: 'listing' | 'watching' | 'backoff', detail?: { error?: string; attempt?: number }): void;
}

export interface ListWatchOptions {
  rest: KubeRest;
  /** The collection (no name); namespace optional for all namespaces. */
  ref: ResourceRef;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  signal: AbortSignal;
  log?: Logger | undefined;
  /** Server-side watch timeout; the loop reconnects from the last resourceVersion when it ends. */
  watchTimeoutSeconds?: number;
  /**
   * A watch that delivers nothing (not even a bookmark) for this long is dropped and re-opened; a list
   * page that has not answered in this long is abandoned and the list retried (default 60 s for lists).
   */
  watchdogMs?: number;
  /** Objects per list page at most (DEFAULT_PAGE_SIZE); fewer when pages are over `pageBytes`. */
  pageSize?: number;
  /** Byte cap of a list page, and so of one object (DEFAULT_PAGE_BYTES); `paged-list.ts`. */
  pageBytes?: number;
  /** Byte cap of one watch event (DEFAULT_EVENT_BYTES): a longer one is skipped (`onTooLarge`). */
  eventBytes?: number;
  backoff?: { baseMs: number; capMs: number };
  /** List and watch PartialObjectMetadata only (no spec/status): far less memory and bandwidth. */
  metadataOnly?: boolean;
}

type WatchOutcome = { kind: 'ended'; rv: string } | { kind: 'gone' };

/**
 * Supervised list→watch loop: tracks resourceVersion, asks for bookmarks, re-lists on 410 Gone, reconnects
 * with capped exponential backoff, and resets a silent watch. Runs until the signal aborts; never throws
 * except AbortedError. It keeps no object cache: handlers decide what to remember.
 */
export async function listWatch<T extends KubeObject>(opts: ListWatchOptions, h: ListWatchHandlers<T>): Promise<void> {
  const backoff = opts.backoff ?? { baseMs: 200, capMs: 30_000 };
  let attempt = 0;
  let rv: string | undefined;
  while (!opts.signal.aborted) {
    try {
      if (rv === undefined) {
        h.onState?.('listing');
        rv = await listAll<T>(opts, h);
      }
      h.onState?.('watching');
      rv = resumeFrom(await watchOnce<T>(opts, rv, h, () => (attempt = 0)), rv, opts);
    } catch (err) {
      if (opts.signal.aborted) break;
      const error = errorMessage(err);
      if (isKubeError(err, 'Gone') || err instanceof HandlerError) rv = undefined;
      attempt++;
      h.onState?.('backoff', { error, attempt });
      opts.log?.warn({ resource: opts.ref.resource, error, attempt }, 'list/watch failed; retrying');
      await sleep(backoffMs(attempt, backoff.baseMs, backoff.capMs), opts.signal).catch(() => undefined);
    }
  }
  throw new AbortedError('list/watch stopped');
}

/** Where the next watch starts: the last resourceVersion seen, or undefined (re-list) after 410 Gone. */
function resumeFrom(outcome: WatchOutcome, rv: string, opts: ListWatchOptions): string | undefined {
  if (outcome.kind === 'ended') return outcome.rv;
  opts.log?.info({ resource: opts.ref.resource, resourceVersion: rv }, 'watch expired (410 Gone); re-listing');
  return undefined;
}

/** Without a deadline a list request stuck on a dead connection would stop the loop for good. */
const DEFAULT_LIST_TIMEOUT_MS = 60_000;
/** Objects per list page when the caller names no size. */
export const DEFAULT_PAGE_SIZE = 100;
/** Byte cap of a list page (and so of one object) when the caller names none. */
export const DEFAULT_PAGE_BYTES = 4 * 1024 * 1024;
/** Byte cap of one watch event when the caller names none. */
export const DEFAULT_EVENT_BYTES = 4 * 1024 * 1024;

/** One page request of the list, with the list's deadline. */
function pageFetcher(opts: ListWatchOptions): FetchPage {
  return async (query, how) => {
    const timeoutMs = opts.watchdogMs ?? DEFAULT_LIST_TIMEOUT_MS;
    const deadline = AbortSignal.timeout(timeoutMs);
    const accept = how.metadataOnly || opts.metadataOnly ? ACCEPT_METADATA_LIST : undefined;
    try {
      return await opts.rest.list(
        opts.ref,
        { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, ...query },
        AbortSignal.any([opts.signal, deadline]),
        accept,
        { maxBytes: how.maxBytes, budget: how.budget },
      );
    } catch (err) {
      if (deadline.aborted && !opts.signal.aborted) throw unavailable(`LIST ${opts.ref.resource}`, new Error(`no answer within ${timeoutMs} ms`));
      throw err;
    }
  };
}

async function listAll<T>(opts: ListWatchOptions, h: ListWatchHandlers<T>): Promise<string> {
  const items: T[] = [];
  const pages = new PagedList<T>(pageFetcher(opts), {
    pageSize: opts.pageSize ?? DEFAULT_PAGE_SIZE,
    pageBytes: opts.pageBytes ?? DEFAULT_PAGE_BYTES,
    skipOversized: h.onTooLarge !== undefined,
  });
  for (;;) {
    const page = await pages.next();
    if (!page) throw new Error('internal: a list ended without its last page');
    const { items: pageItems, first, last, resourceVersion } = page;
    for (const o of page.skipped) {
      opts.log?.warn({ resource: opts.ref.resource, namespace: o.namespace, name: o.name, limitBytes: o.limitBytes }, 'object too large; skipped');
      await runHandler(() => h.onTooLarge?.(o));
    }
    if (h.onListPage) await runHandler(() => h.onListPage?.(pageItems, { first, last, resourceVersion }));
    if (h.onList) items.push(...pageItems);
    if (last) {
      if (h.onList) await runHandler(() => h.onList?.(items, resourceVersion));
      return resourceVersion;
    }
  }
}

interface RawEvent {
  type: WatchEventType | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

function watchUrl(opts: ListWatchOptions, startRv: string, timeoutSeconds: number): { path: string; url: string } {
  const path = resourcePath({ ...opts.ref, name: undefined });
  const url = opts.rest.url(path, {
    watch: 1,
    allowWatchBookmarks: true,
    resourceVersion: startRv,
    timeoutSeconds,
    labelSelector: opts.labelSelector,
    fieldSelector: opts.fieldSelector,
  });
  return { path, url };
}

/**
 * Opens the watch stream; a non-200 answer becomes a typed KubeError (410 included). undici's request API: the
 * body is a Node stream, read line by line without fetch's web-stream layers.
 */
async function openWatch(opts: ListWatchOptions, path: string, url: string, signal: AbortSignal): Promise<Readable> {
  const { headers, dispatcher } = await opts.rest.credentials();
  const target = new URL(url);
  let res;
  try {
    res = await dispatcher.request({
      origin: target.origin,
      path: target.pathname + target.search,
      method: 'GET',
      headers: { ...headers, accept: opts.metadataOnly ? ACCEPT_METADATA : 'application/json' },
      signal,
    });
  } catch (err) {
    throw opts.signal.aborted ? err : unavailable(`WATCH ${path}`, err);
  }
  if (res.statusCode !== 200) {
    const text = await res.body.text().catch(() => '');
    throw kubeErrorFromStatus(res.statusCode, safeJson(text), `WATCH ${path}`);
  }
  return res.body;
}

/** Reads events until the stream ends; returns the last resourceVersion seen, or 'gone' on a 410 event. */
async function consume<T extends KubeObject>(
  input: Readable,
  opts: ListWatchOptions,
  state: { rv: string; path: string },
  h: ListWatchHandlers<T>,
  onLine: () => void,
): Promise<WatchOutcome> {
  const { path } = state;
  // Leaving the loop early (a 410 event, a handler error) aborts the connection afterwards; the stream's
  // abort error then finds no iterator to take it and would crash the process as an unhandled 'error'
  // event. Errors while iterating still reach the loop through the iterator.
  const ignore = (): void => undefined;
  input.on('error', ignore);
  const maxBytes = opts.eventBytes ?? DEFAULT_EVENT_BYTES;
  for await (const line of cappedLines(input as AsyncIterable<Buffer>, maxBytes)) {
    onLine();
    if (line.kind === 'oversized') {
      // Never parsed: the stream goes on after it, from its resourceVersion (so a reconnect does not replay it).
      const { type, name, namespace, uid, resourceVersion } = line.skimmed;
      state.rv = resourceVersion ?? state.rv;
      opts.log?.warn({ resource: opts.ref.resource, namespace, name, type, bytes: line.bytes, limitBytes: maxBytes }, 'watch event too large; skipped');
      await runHandler(() => h.onTooLarge?.({ name: name ?? '', namespace, uid, resourceVersion, limitBytes: maxBytes }, type));
      continue;
    }
    if (line.text.length === 0) continue;
    const ev = JSON.parse(line.text) as RawEvent;
    if (ev.type === 'ERROR') {
      if (ev.object.code === 410) return { kind: 'gone' };
      throw kubeErrorFromStatus(ev.object.code ?? 500, ev.object, `WATCH ${path}`);
    }
    state.rv = ev.object.metadata?.resourceVersion ?? state.rv;
    if (ev.type === 'BOOKMARK') continue;
    await runHandler(() => h.onEvent({ type: ev.type as WatchEventType, object: ev.object as T }));
  }
  return { kind: 'ended', rv: state.rv };
}

async function watchOnce<T extends KubeObject>(opts: ListWatchOptions, startRv: string, h: ListWatchHandlers<T>, onHealthy: () => void): Promise<WatchOutcome> {
  const timeoutSeconds = opts.watchTimeoutSeconds ?? 240 + Math.floor(Math.random() * 120);
  const { path, url } = watchUrl(opts, startRv, timeoutSeconds);
  const conn = new AbortController();
  const onAbort = (): void => conn.abort();
  opts.signal.addEventListener('abort', onAbort, { once: true });
  // A handler may abort the signal while the list is delivered (a consumer that has seen enough): no watch then.
  if (opts.signal.aborted) conn.abort();
  const watchdogMs = opts.watchdogMs ?? (timeoutSeconds + 30) * 1000;
  let silent: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(silent);
    silent = setTimeout(() => conn.abort(), watchdogMs);
  };
  const state = { rv: startRv, path };
  try {
    arm();
    const body = await openWatch(opts, path, url, conn.signal);
    onHealthy();
    return await consume(body, opts, state, h, arm);
  } catch (err) {
    // A watchdog reset (our own abort, not the caller's) resumes from the last resourceVersion.
    if (conn.signal.aborted && !opts.signal.aborted && !(err instanceof HandlerError)) {
      opts.log?.info({ resource: opts.ref.resource }, 'watch silent too long; reconnecting');
      return { kind: 'ended', rv: state.rv };
    }
    throw err;
  } finally {
    clearTimeout(silent);
    opts.signal.removeEventListener('abort', onAbort);
    conn.abort();
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
