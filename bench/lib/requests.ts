/**
 * Apiserver request accounting for benchmarks: `apiserver_request_total` read from kube-apiserver's /metrics,
 * client-side counts of the requests made through a KubeRest (the simulated kubelets', the benchmark's own),
 * and the arithmetic that turns "all requests in a window" into "requests made by the controller under test".
 *
 * A key is `<VERB> <group/>resource</subresource>` with the apiserver's verb names (LIST vs GET, APPLY for
 * server-side apply, WATCH), e.g. `PATCH pods/status`, `POST events.k8s.io/events`, `PUT apps/statefulsets/status`.
 * A dry run (`dryRun=All`) gets its own key, the same with ` dryRun` appended: `POST pods dryRun`.
 */
import { PatchType, type KubeRest, type RequestOptions } from '../../src/kube/rest.ts';

export type Counts = Map<string, number>;

const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

export function requestKey(verb: string, group: string, resource: string, subresource: string, dryRun = false): string {
  return `${verb} ${group ? `${group}/` : ''}${resource}${subresource ? `/${subresource}` : ''}${dryRun ? ' dryRun' : ''}`;
}

/** Parses `apiserver_request_total` (resource requests only) into counts by key, summed over codes and scopes. */
export function parseApiserverRequests(metricsText: string): { total: Counts; conflicts: Counts } {
  const total: Counts = new Map();
  const conflicts: Counts = new Map();
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const close = line.lastIndexOf('}');
    const value = Number(line.slice(close + 1).trim());
    const labels: Record<string, string> = {};
    for (const m of line.slice(0, close).matchAll(LABEL)) labels[m[1]!] = m[2]!;
    const resource = labels['resource'] ?? '';
    if (!resource) continue;
    const key = requestKey(labels['verb'] ?? '?', labels['group'] ?? '', resource, labels['subresource'] ?? '', Boolean(labels['dry_run']));
    add(total, key, value);
    if (labels['code'] === '409') add(conflicts, key, value);
  }
  return { total, conflicts };
}

export async function readApiserverRequests(rest: KubeRest): Promise<{ total: Counts; conflicts: Counts }> {
  return parseApiserverRequests(await rest.request<string>('GET', '/metrics', { accept: 'text/plain' }));
}

/** `/api/v1/namespaces/ns/pods/p/status` → group '', resource pods, named, subresource status. */
function parseResourcePath(path: string): { group: string; resource: string; named: boolean; subresource: string } | undefined {
  const segs = path.split('?')[0]!.split('/').filter(Boolean);
  let group: string;
  let rest: string[];
  if (segs[0] === 'api') [group, rest] = ['', segs.slice(2)];
  else if (segs[0] === 'apis') [group, rest] = [segs[1] ?? '', segs.slice(3)];
  else return undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource, name, subresource] = rest;
  return resource ? { group, resource, named: name !== undefined, subresource: subresource ?? '' } : undefined;
}

/** The key of a request a KubeRest is about to make, or undefined for non-resource paths (/metrics, /readyz). */
export function clientRequestKey(method: string, path: string, opts: RequestOptions): string | undefined {
  const parsed = parseResourcePath(path);
  if (!parsed) return undefined;
  const { group, resource, named, subresource } = parsed;
  let verb = method.toUpperCase();
  if (verb === 'GET') verb = opts.query?.['watch'] ? 'WATCH' : named ? 'GET' : 'LIST';
  else if (verb === 'PATCH' && opts.contentType === PatchType.apply) verb = 'APPLY';
  else if (verb === 'DELETE' && !named) verb = 'DELETECOLLECTION';
  return requestKey(verb, group, resource, subresource, opts.query?.['dryRun'] !== undefined);
}

/**
 * Counts, by key, every request made through `rest` from now on (by replacing the instance's `request`, which
 * every verb method and list-watch's LIST go through). Watch streams are opened outside `request` and are not
 * counted here; the apiserver counts a WATCH only when it closes, so WATCH is reported apart anyway.
 */
export function countRequests(rest: KubeRest): { snapshot(): Counts } {
  const counts: Counts = new Map();
  const original = rest.request.bind(rest);
  rest.request = <T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> => {
    const key = clientRequestKey(method, path, opts);
    if (key) add(counts, key, 1);
    return original<T>(method, path, opts);
  };
  return { snapshot: () => new Map(counts) };
}

export function add(into: Counts, key: string, n: number): void {
  into.set(key, (into.get(key) ?? 0) + n);
}

/** after − before, keys with a zero difference dropped. */
export function diff(after: Counts, before: Counts): Counts {
  const out: Counts = new Map();
  for (const key of new Set([...after.keys(), ...before.keys()])) {
    const d = (after.get(key) ?? 0) - (before.get(key) ?? 0);
    if (d !== 0) out.set(key, d);
  }
  return out;
}

/** a − Σ others, keys with a zero result dropped. */
export function subtract(a: Counts, ...others: Counts[]): Counts {
  const out: Counts = new Map(a);
  for (const o of others) for (const [k, v] of o) add(out, k, -v);
  for (const [k, v] of out) if (v === 0) out.delete(k);
  return out;
}

export function sum(c: Counts, filter: (key: string) => boolean = () => true): number {
  let n = 0;
  for (const [k, v] of c) if (filter(k)) n += v;
  return n;
}

/** A point in time of every counter the benchmark subtracts. */
export interface RequestSnapshot {
  apiserver: Counts;
  conflicts: Counts;
  kubelet: Counts;
  bench: Counts;
}

export interface RequestWindow {
  /** Every resource request the apiserver served in the window. */
  apiserver: Counts;
  /** Requests the simulated kubelets (and the sandbox's provisioner) made in the window, counted client-side. */
  kubelet: Counts;
  /** Requests the benchmark itself made (patches, status polls, its pod LIST). */
  bench: Counts;
  /** apiserver − kubelet − bench: what the controller under test, the scheduler and background made. */
  residual: Counts;
  conflicts: Counts;
}

export function window(before: RequestSnapshot, after: RequestSnapshot): RequestWindow {
  const apiserver = diff(after.apiserver, before.apiserver);
  const kubelet = diff(after.kubelet, before.kubelet);
  const bench = diff(after.bench, before.bench);
  return { apiserver, kubelet, bench, residual: subtract(apiserver, kubelet, bench), conflicts: diff(after.conflicts, before.conflicts) };
}
