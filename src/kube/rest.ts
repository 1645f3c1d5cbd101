import { KubeConfig, RequestContext, HttpMethod } from '@kubernetes/client-node';
import { fetch, type Dispatcher } from 'undici';
import { kubeErrorFromStatus, unavailable } from './errors.ts';
import { resourcePath, type ResourceRef } from './paths.ts';

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
  signal?: AbortSignal | undefined;
}

export interface ListResult<T> {
  metadata: { resourceVersion: string; continue?: string };
  items: T[];
}

/** Auth headers are refreshed this often so rotated service-account tokens are picked up. */
const AUTH_REFRESH_MS = 60_000;

/**
 * A thin JSON client over the apiserver REST API. It reuses one connection pool, sets content types
 * explicitly, and turns every non-2xx answer into a typed KubeError.
 */
export class KubeRest {
  readonly server: string;
  private auth: { headers: Record<string, string>; dispatcher: Dispatcher | undefined; at: number } | undefined;
  private readonly counts = new Map<string, number>();

  readonly kc: KubeConfig;

  constructor(kc: KubeConfig) {
    this.kc = kc;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/$/, '');
  }

  /** Requests made by this client, by verb (for benchmarks and metrics). */
  requestCounts(): ReadonlyMap<string, number> {
    return this.counts;
  }

  async authFor(url: string): Promise<{ headers: Record<string, string>; dispatcher: Dispatcher | undefined }> {
    const now = Date.now();
    if (!this.auth || now - this.auth.at > AUTH_REFRESH_MS) {
      const ctx = new RequestContext(url, HttpMethod.GET);
      await this.kc.applySecurityAuthentication(ctx);
      const dispatcher: Dispatcher | undefined = this.auth?.dispatcher ?? ctx.getDispatcher();
      this.auth = { headers: ctx.getHeaders(), dispatcher, at: now };
    }
    return this.auth;
  }

  url(path: string, query?: RequestOptions['query']): string {
    const u = new URL(this.server + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const url = this.url(path, opts.query);
    const what = `${method} ${path}`;
    const { headers, dispatcher } = await this.authFor(url);
    const h: Record<string, string> = { ...headers, accept: 'application/json' };
    if (opts.body !== undefined) h['content-type'] = opts.contentType ?? 'application/json';
    this.counts.set(method, (this.counts.get(method) ?? 0) + 1);
    let res;
    try {
      res = await fetch(url, {
        method,
        headers: h,
        dispatcher,
        body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
        signal: opts.signal ?? null,
      });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      throw unavailable(what, err);
    }
    const text = await res.text();
    const parsed: unknown = text.length > 0 && isJson(res.headers.get('content-type')) ? JSON.parse(text) : text;
    if (res.status < 200 || res.status > 299) throw kubeErrorFromStatus(res.status, parsed, what);
    return parsed as T;
  }

  get<T>(ref: ResourceRef, signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', resourcePath(ref), { signal });
  }

  list<T>(ref: ResourceRef, query: RequestOptions['query'] = {}, signal?: AbortSignal): Promise<ListResult<T>> {
    return this.request<ListResult<T>>('GET', resourcePath({ ...ref, name: undefined }), { query, signal });
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

function isJson(contentType: string | null): boolean {
  return contentType !== null && contentType.includes('json');
}

export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}
