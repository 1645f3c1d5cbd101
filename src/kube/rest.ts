import type { Dispatcher } from 'undici';
import { sleep } from '../common/wait.ts';
import { effectiveCap, readBounded, type ByteBudget } from './bounded-body.ts';
import { isKubeError, unavailable, type KubeError } from './errors.ts';
import { kubeDispatcher, type KubeConfig } from './kubeconfig.ts';
import { resourcePath, type ResourceRef } from './paths.ts';
import { ACCEPT_PROTOBUF, isProtobuf } from './protobuf/media.ts';
import { answer, headerOf, requestHeaders, serialize, type Head } from './rest-wire.ts';
import type { ListResult } from './types.ts';

export type { ListResult } from './types.ts';

export { loadKubeConfig, type KubeConfig } from './kubeconfig.ts';

/** Patch content types; always named explicitly on every patch. */
export const PatchType = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = (typeof PatchType)[keyof typeof PatchType];

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Accept header; defaults to JSON. */
  accept?: string;
  /**
   * Decodes a protobuf answer (built-in types only). With it, a client that reads protobuf asks for protobuf
   * first and JSON second, and an answer in JSON is parsed as usual.
   */
  protobuf?: ((body: Uint8Array) => unknown) | undefined;
  signal?: AbortSignal | undefined;
  /** The answer's byte cap (default: the client's `maxResponseBytes`); over it: a TooLarge KubeError. */
  maxBytes?: number | undefined;
  /** A budget shared with other requests: caps this answer too, and is charged with its bytes. */
  budget?: ByteBudget | undefined;
}

/** Asks the apiserver for metadata only (PartialObjectMetadata), for consumers that need no spec or status. */
export const ACCEPT_METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
export const ACCEPT_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** How a list answer is read: decoded from protobuf (when the client reads it), and under which byte cap. */
export interface ListRead<T> {
  protobuf?: ((body: Uint8Array) => ListResult<T>) | undefined;
  maxBytes?: number | undefined;
  budget?: ByteBudget | undefined;
}

/** Auth headers are refreshed this often so rotated service-account tokens are picked up. */
const AUTH_REFRESH_MS = 60_000;

/** The deadline of one request (not of a watch) when the caller names none. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/**
 * The byte cap of an answer when the caller names none: above the JSON form of the largest object etcd stores
 * (1.5 MiB by default, as protobuf), well below what a process's heap holds. Paged reads set their own cap.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** A 429 is retried this often in place, each time after the wait the apiserver asked for. */
const TOO_MANY_REQUESTS_RETRIES = 3;
/** Longest `Retry-After` waited out in place; a longer one goes back to the caller (the queue backs off). */
const MAX_IN_PLACE_WAIT_MS = 10_000;

export interface KubeRestOptions {
  /** Deadline of every request this client makes (watches are not requests here: `watch.ts`). */
  requestTimeoutMs?: number;
  /** Read built-in objects in protobuf where the caller can decode it (`RequestOptions.protobuf`); default JSON. */
  protobuf?: boolean;
  /** The byte cap of an answer whose request names none (DEFAULT_MAX_RESPONSE_BYTES). */
  maxResponseBytes?: number;
}

interface Auth {
  headers: Record<string, string>;
  dispatcher: Dispatcher;
  at: number;
}

/**
 * A thin JSON client over the apiserver REST API. It reuses one connection pool, sets content types
 * explicitly, and turns every non-2xx answer into a typed KubeError. A client built with `protobuf` reads in
 * protobuf where the caller passes a decoder (the worker's pod reads); every write is JSON.
 */
export class KubeRest {
  readonly server: string;
  /** Scheme, host and port of `server` (a path prefix in `server` goes into every request's path). */
  private readonly origin: string;
  private readonly prefix: string;
  private readonly config: KubeConfig;
  private auth: Auth | undefined;
  private refreshing: Promise<Auth> | undefined;
  private readonly counts = new Map<string, number>();
  readonly requestTimeoutMs: number;
  readonly protobuf: boolean;
  readonly maxResponseBytes: number;

  constructor(config: KubeConfig, opts: KubeRestOptions = {}) {
    this.config = config;
    this.server = config.server.replace(/\/$/, '');
    const server = new URL(this.server);
    this.origin = server.origin;
    this.prefix = server.pathname.replace(/\/$/, '');
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.protobuf = opts.protobuf ?? false;
    this.maxResponseBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /** Requests made by this client, by verb (for benchmarks and metrics). */
  requestCounts(): ReadonlyMap<string, number> {
    return this.counts;
  }

  /**
   * Headers and connection pool for a request (to any URL of this server). Credentials are refreshed every
   * minute, one refresh at a time; the pool is built once, from the first credentials.
   */
  async credentials(): Promise<{ headers: Record<string, string>; dispatcher: Dispatcher }> {
    if (this.auth && Date.now() - this.auth.at <= AUTH_REFRESH_MS) return this.auth;
    return this.refreshOnce();
  }

  private refreshOnce(): Promise<Auth> {
    this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async refresh(): Promise<Auth> {
    const at = Date.now();
    const creds = await this.config.credentials();
    this.auth = { headers: creds.headers, dispatcher: this.auth?.dispatcher ?? kubeDispatcher(this.config, creds), at };
    return this.auth;
  }

  url(path: string, query?: RequestOptions['query']): string {
    const u = new URL(this.server + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /**
   * One request with a deadline (`requestTimeoutMs`, on top of the caller's signal). A 401 reads the
   * credentials again and retries once (a rotated token); a 429 waits out its `Retry-After` (when short) and
   * retries, at most TOO_MANY_REQUESTS_RETRIES times: the apiserver refused it before acting on it.
   */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once<T>(method, path, opts);
      } catch (err) {
        if (isKubeError(err, 'Unauthorized') && !refreshed) {
          refreshed = true;
          if (this.auth) this.auth.at = Number.NEGATIVE_INFINITY;
          await this.refreshOnce();
          continue;
        }
        if (!isKubeError(err, 'TooManyRequests') || !waitsInPlace(err, attempt)) throw err;
        await sleep(err.retryAfterMs ?? 0, opts.signal);
      }
    }
  }

  private async once<T>(method: string, path: string, opts: RequestOptions): Promise<T> {
    const what = `${method} ${path}`;
    const { headers, dispatcher } = await this.credentials();
    this.counts.set(method, (this.counts.get(method) ?? 0) + 1);
    // The deadline is a timer cleared with the answer (AbortSignal.timeout would fire later, for every request).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.requestTimeoutMs);
    const cancel = (): void => deadline.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', cancel, { once: true });
    const decode = this.protobuf ? opts.protobuf : undefined;
    const accept = decode ? ACCEPT_PROTOBUF : opts.accept;
    let head: Head;
    let body: string | Uint8Array;
    try {
      if (opts.signal?.aborted) throw opts.signal.reason;
      // undici's request API: none of fetch's WHATWG Request/Response and web-stream layers per call.
      const res = await dispatcher.request(this.requestOptions(method, path, { ...opts, accept }, headers, deadline.signal));
      head = { status: res.statusCode, contentType: headerOf(res.headers, 'content-type'), retryAfter: headerOf(res.headers, 'retry-after') };
      body = await this.bodyOf(res, head, opts, what);
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? err;
      if (isKubeError(err, 'TooLarge')) throw err;
      throw unavailable(what, deadline.signal.aborted ? new Error(`no answer within ${this.requestTimeoutMs} ms`) : err);
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', cancel);
    }
    return answer<T>(head, body, what, decode);
  }

  /** The answer's body under its cap: a Buffer for protobuf (decoded natively, sliced without copies), else text. */
  private async bodyOf(res: Dispatcher.ResponseData, head: Head, opts: RequestOptions, what: string): Promise<string | Buffer> {
    const limit = { ...effectiveCap(opts.maxBytes ?? this.maxResponseBytes, opts.budget), budget: opts.budget };
    const bytes = await readBounded(res.body, headerOf(res.headers, 'content-length'), limit, what);
    return isProtobuf(head.contentType) ? bytes : bytes.toString('utf8');
  }

  private requestOptions(method: string, path: string, opts: RequestOptions, auth: Record<string, string>, signal: AbortSignal): Dispatcher.RequestOptions {
    return {
      origin: this.origin,
      path: this.pathOf(path, opts.query),
      method,
      headers: requestHeaders(auth, opts),
      body: serialize(opts.body),
      // undici closes the connection after a body sent with a method that does not expect one (a DELETE with
      // its DeleteOptions); the apiserver reads such bodies, so the connection is kept (no new TLS handshake).
      ...(opts.body === undefined ? {} : { reset: false }),
      signal,
    };
  }

  /** The request target: the server's path prefix (if any), the resource path and the query (as `url` has them). */
  private pathOf(path: string, query?: RequestOptions['query']): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const search = params.size > 0 ? `?${params.toString()}` : '';
    return `${this.prefix}${path}${search}`;
  }

  /** `protobuf` decodes the object when this client reads protobuf (`KubeRestOptions.protobuf`). */
  get<T>(ref: ResourceRef, signal?: AbortSignal, protobuf?: (body: Uint8Array) => T): Promise<T> {
    return this.request<T>('GET', resourcePath(ref), { signal, protobuf });
  }

  /**
   * `read` is the protobuf decoder of the list (used when this client reads protobuf, `KubeRestOptions.protobuf`),
   * or that with the answer's byte cap and budget.
   */
  async list<T>(
    ref: ResourceRef,
    query: RequestOptions['query'] = {},
    signal?: AbortSignal,
    accept?: string,
    read?: ((body: Uint8Array) => ListResult<T>) | ListRead<T>,
  ): Promise<ListResult<T>> {
    const { protobuf, maxBytes, budget } = typeof read === 'function' ? { protobuf: read, maxBytes: undefined, budget: undefined } : (read ?? {});
    const res = await this.request<Omit<ListResult<T>, 'items'> & { items?: T[] | null }>('GET', resourcePath({ ...ref, name: undefined }), {
      query,
      signal,
      accept,
      protobuf,
      maxBytes,
      budget,
    });
    // An empty PartialObjectMetadataList comes back with `items: null`.
    return { ...res, items: res.items ?? [] };
  }

  create<T>(ref: ResourceRef, body: unknown, query: RequestOptions['query'] = {}, signal?: AbortSignal): Promise<T> {
    return this.request<T>('POST', resourcePath({ ...ref, name: undefined }), { body, query, signal });
  }

  /** PUT: the body carries metadata.resourceVersion, so the write is an optimistic-concurrency update. */
  replace<T>(ref: ResourceRef, body: unknown, query: RequestOptions['query'] = {}, signal?: AbortSignal): Promise<T> {
    return this.request<T>('PUT', resourcePath(ref), { body, query, signal });
  }

  patch<T>(ref: ResourceRef, patch: unknown, type: PatchType, query: RequestOptions['query'] = {}, signal?: AbortSignal): Promise<T> {
    return this.request<T>('PATCH', resourcePath(ref), { body: patch, contentType: type, query, signal });
  }

  /** Server-side apply with a field manager. */
  apply<T>(ref: ResourceRef, body: unknown, fieldManager: string, force = false, signal?: AbortSignal): Promise<T> {
    return this.patch<T>(ref, body, PatchType.apply, { fieldManager, force: force || undefined }, signal);
  }

  delete(
    ref: ResourceRef,
    opts: { uid?: string; resourceVersion?: string; gracePeriodSeconds?: number; propagationPolicy?: string } = {},
    signal?: AbortSignal,
  ): Promise<unknown> {
    const preconditions = opts.uid || opts.resourceVersion ? { uid: opts.uid, resourceVersion: opts.resourceVersion } : undefined;
    const body = {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions,
      gracePeriodSeconds: opts.gracePeriodSeconds,
      propagationPolicy: opts.propagationPolicy,
    };
    return this.request('DELETE', resourcePath(ref), { body, signal });
  }
}

function waitsInPlace(err: KubeError, attempt: number): boolean {
  return attempt <= TOO_MANY_REQUESTS_RETRIES && err.retryAfterMs !== undefined && err.retryAfterMs <= MAX_IN_PLACE_WAIT_MS;
}
