/**
 * Reads every reconcile makes the same way: an object that may be absent, one key of a Secret, and every object
 * a LIST selects, page by page under a byte cap.
 */
import { isKubeError } from './errors.ts';
import { core, type ResourceRef } from './paths.ts';
import type { KubeRest, ListResult } from './rest.ts';
import type { ByteBudget } from './bounded-body.ts';
import { PagedList, type FetchPage, type Page } from './paged-list.ts';

/** What `p` resolves to, or undefined when the object is NotFound. */
export async function orUndefined<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isKubeError(err, 'NotFound')) return undefined;
    throw err;
  }
}

/** One key of Secret `namespace/name`, decoded; undefined when the Secret or the key is absent. */
export async function secretValue(rest: KubeRest, signal: AbortSignal, namespace: string, name: string, key: string): Promise<string | undefined> {
  const secret = await orUndefined(rest.get<{ data?: Record<string, string> }>(core('secrets', namespace, name), signal));
  const data = secret?.data?.[key];
  return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
}

/** Objects per LIST page at most: an App of thousands of pods is read in pages, never in one response. */
export const LIST_PAGE_SIZE = 100;
/** Byte cap of one LIST page (and so of one object): a larger page is asked again with fewer objects. */
export const LIST_PAGE_BYTES = 4 * 1024 * 1024;

export interface ListAllOptions<T> {
  /** Objects per page (LIST_PAGE_SIZE). */
  pageSize?: number;
  /** Byte cap of a page (LIST_PAGE_BYTES). */
  pageBytes?: number;
  /** Shared by the reads of one reconcile (the App client's); none: each read is bounded only per page. */
  budget?: ByteBudget | undefined;
  /** Decodes a page answered in protobuf, when the client reads protobuf (`KubeRestOptions.protobuf`). */
  protobuf?: ((body: Uint8Array) => ListResult<T>) | undefined;
}

/**
 * Every object `ref` and `labelSelector` select, read page by page (a consistent read; the apiserver serves it
 * from its watch cache where it can), each page under a byte cap (`PagedList`: fewer objects per page when a page
 * is too large; an object alone over the cap, or a read past the budget, fails with a TooLarge KubeError). A
 * continue token that expired meanwhile (410) restarts the read once.
 */
export async function listAll<T>(
  rest: KubeRest,
  ref: ResourceRef,
  labelSelector: string | undefined,
  signal: AbortSignal,
  { pageSize = LIST_PAGE_SIZE, pageBytes = LIST_PAGE_BYTES, budget, protobuf }: ListAllOptions<T> = {},
): Promise<T[]> {
  const fetch: FetchPage = (query, how) =>
    rest.list<T>(ref, { labelSelector, ...query }, signal, undefined, { protobuf, maxBytes: how.maxBytes, budget: how.budget });
  for (let attempt = 0; ; attempt++) {
    const items: T[] = [];
    const pages = new PagedList<T>(fetch, { pageSize, pageBytes, budget });
    let page: Page<T> | undefined;
    try {
      while ((page = await pages.next())) items.push(...page.items);
      return items;
    } catch (err) {
      if (attempt > 0 || page === undefined || !isKubeError(err, 'Gone')) throw err;
    }
  }
}
