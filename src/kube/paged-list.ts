/**
 * A LIST read page by page under a byte cap per page. A page over the cap is asked again from the same
 * `continue` token with half the `limit` (the apiserver takes a different limit on a continue), down to one
 * object; the limit grows back (doubling) after pages that fit, never to a limit that was refused in this read
 * unless an object was skipped since. An object that alone is over the cap is either a failure (the caller
 * cannot do without it) or, with `skipOversized`, skipped: its name and the next token come from a
 * metadata-only page of one object (PartialObjectMetadataList), and the read goes on after it.
 */
import type { ByteBudget } from './bounded-body.ts';
import { isKubeError } from './errors.ts';
import type { ListResult } from './rest.ts';

export interface PageBounds {
  /** Objects asked for per page at most. */
  pageSize: number;
  /** Byte cap of one page's answer: also the largest object read (a page of one). */
  pageBytes: number;
  /** Shared with the caller's other reads; a page refused for want of budget fails the read (never shrinks). */
  budget?: ByteBudget | undefined;
  /** Skip (and name) an object that alone is over `pageBytes`, instead of failing the read. */
  skipOversized?: boolean;
}

/** An object left out of a list for its size: what its metadata says of it. */
export interface OversizedObject {
  name: string;
  namespace?: string | undefined;
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  /** The cap it did not fit. */
  limitBytes: number;
}

export interface Page<T> {
  items: T[];
  resourceVersion: string;
  first: boolean;
  last: boolean;
  /** Objects left out of this page (`skipOversized`). */
  skipped: OversizedObject[];
}

/** One request of the read: a page of `limit` objects from `continue`, whole or metadata only, under `maxBytes`. */
export type FetchPage = (
  query: { limit: number; continue: string | undefined },
  how: { metadataOnly: boolean; maxBytes: number; budget: ByteBudget | undefined },
) => Promise<ListResult<unknown>>;

/** The cap of a metadata-only page of one object (annotations are at most 256 KiB; managed fields are small). */
export const METADATA_PAGE_BYTES = 1024 * 1024;

interface Meta {
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export class PagedList<T> {
  private limit: number;
  /** The smallest limit refused since the last skip: the limit never grows back to it. */
  private ceiling = Number.POSITIVE_INFINITY;
  private cont: string | undefined;
  private started = false;
  private done = false;
  private readonly fetch: FetchPage;
  private readonly bounds: PageBounds;

  constructor(fetch: FetchPage, bounds: PageBounds) {
    this.fetch = fetch;
    this.bounds = bounds;
    this.limit = Math.max(1, bounds.pageSize);
  }

  /** The limit the next page is asked with (for tests and logs). */
  get pageLimit(): number {
    return this.limit;
  }

  /** The next page, or undefined once the last was returned. */
  async next(): Promise<Page<T> | undefined> {
    if (this.done) return undefined;
    for (;;) {
      try {
        const page = await this.fetch(
          { limit: this.limit, continue: this.cont },
          { metadataOnly: false, maxBytes: this.bounds.pageBytes, budget: this.bounds.budget },
        );
        this.limit = Math.max(1, Math.min(this.bounds.pageSize, this.limit * 2, this.ceiling - 1));
        return this.advance(page.items as T[], page.metadata, []);
      } catch (err) {
        if (!isKubeError(err, 'TooLarge') || err.budget) throw err;
        if (this.limit > 1) {
          this.ceiling = Math.min(this.ceiling, this.limit);
          this.limit = Math.max(1, Math.floor(this.limit / 2));
          continue;
        }
        if (this.bounds.skipOversized !== true) throw err;
        return this.skipOne(err.limitBytes ?? this.bounds.pageBytes);
      }
    }
  }

  /** The object at the current token is over the cap alone: named from its metadata, and passed over. */
  private async skipOne(limitBytes: number): Promise<Page<T>> {
    const meta = await this.fetch({ limit: 1, continue: this.cont }, { metadataOnly: true, maxBytes: METADATA_PAGE_BYTES, budget: this.bounds.budget });
    this.ceiling = Number.POSITIVE_INFINITY;
    const skipped = (meta.items as Meta[]).map((o) => ({
      name: o.metadata?.name ?? '',
      namespace: o.metadata?.namespace,
      uid: o.metadata?.uid,
      resourceVersion: o.metadata?.resourceVersion,
      limitBytes,
    }));
    return this.advance([], meta.metadata, skipped);
  }

  private advance(items: T[], metadata: ListResult<unknown>['metadata'], skipped: OversizedObject[]): Page<T> {
    const first = !this.started;
    this.started = true;
    this.cont = metadata.continue || undefined;
    this.done = this.cont === undefined;
    return { items, resourceVersion: metadata.resourceVersion, first, last: this.done, skipped };
  }
}
