/**
 * Kubernetes resource quantities (`100m`, `1.5`, `512Mi`, `1G`, `1e3`) compared by value, and the pod QoS class
 * as the apiserver computes it at creation (upstream GetPodQOS, cpu and memory only; pod-level resources win
 * when set). The one implementation for the in-place update decision and the simulated kubelet.
 */

import type { ResourceList, ResourceRequirements as KubeResourceRequirements } from '../kube/types.ts';

export type { ResourceList };

/** A container's (or a pod's) `resources`: only requests and limits are read. (A type, so any object with them fits.) */
export type ResourceRequirements = Pick<KubeResourceRequirements, 'requests' | 'limits'>;

/** The resources an in-place resize may change and the QoS class is computed from. */
export const RESIZABLE = ['cpu', 'memory'] as const;
export type ResizableResource = (typeof RESIZABLE)[number];

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E))?$/;

/** The value in base units (cores, bytes), or undefined when `q` is not a quantity. */
export function parseQuantity(q: string | undefined): number | undefined {
  if (q === undefined) return undefined;
  const m = QUANTITY.exec(String(q).trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  if (m[2]) return n * (BINARY[m[2]] ?? 1);
  if (m[3]) return n * 10 ** Number(m[3].slice(1));
  return n * (DECIMAL[m[4] ?? ''] ?? 1);
}

/** Milli-units, rounded up as the apiserver rounds cpu (`0.0001` is 1m); 0 when unset or not a quantity. */
export function milli(q: string | undefined): number {
  const v = parseQuantity(q);
  return v === undefined ? 0 : Math.ceil(v * 1000 - 1e-9);
}

/** Same value (`1` equals `1000m`); two unset quantities are equal, an unparsable one equals only itself. */
export function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (parseQuantity(a) === undefined || parseQuantity(b) === undefined) return a === b;
  return milli(a) === milli(b);
}

/** Whether two resource lists hold the same quantities for `names`. */
export function sameQuantities(a: ResourceList | undefined, b: ResourceList | undefined, names: readonly string[]): boolean {
  return names.every((n) => sameQuantity(a?.[n], b?.[n]));
}

/** Sum of the given lists in milli-units per resource name. */
export function sumMilli(lists: readonly ResourceList[], names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of names) out[n] = lists.reduce((acc, l) => acc + milli(l[n]), 0);
  return out;
}

/** Explicit requests, or the limits where requests are unset (API defaulting). */
export function effectiveRequests(r: ResourceRequirements | undefined): ResourceList {
  return { ...(r?.limits ?? {}), ...(r?.requests ?? {}) };
}

/** Same cpu/memory requests and limits; requests default to limits, as the apiserver defaults them. */
export function sameResizable(a: ResourceRequirements | undefined, b: ResourceRequirements | undefined): boolean {
  return sameQuantities(effectiveRequests(a), effectiveRequests(b), RESIZABLE) && sameQuantities(a?.limits, b?.limits, RESIZABLE);
}

/** Only the cpu/memory requests and limits of `r` (what pods/resize is asked to set). */
export function resizableOf<R extends ResourceRequirements>(r: R | undefined): ResourceRequirements {
  const out: ResourceRequirements = {};
  for (const part of ['requests', 'limits'] as const) {
    const entries = RESIZABLE.flatMap((n) => (r?.[part]?.[n] !== undefined ? [[n, r[part][n]] as const] : []));
    if (entries.length > 0) out[part] = Object.fromEntries(entries);
  }
  return out;
}

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const positive = (q: string | undefined): boolean => q !== undefined && milli(q) > 0;

/**
 * Upstream GetPodQOS over request/limit lists (one pair per container, or the pod-level pair): BestEffort when
 * no positive cpu/memory request or limit is set; Guaranteed when every list has positive cpu and memory
 * limits and the summed requests equal the summed limits; Burstable otherwise. Zero quantities are ignored.
 */
function qosOfLists(pairs: readonly { requests: ResourceList; limits: ResourceList }[]): QosClass {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  for (const { requests: req, limits: lim } of pairs) {
    for (const r of RESIZABLE) {
      if (positive(req[r])) requests.set(r, (requests.get(r) ?? 0) + milli(req[r]));
      if (positive(lim[r])) limits.set(r, (limits.get(r) ?? 0) + milli(lim[r]));
    }
    if (!RESIZABLE.every((r) => positive(lim[r]))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  const matching = [...requests].every(([r, v]) => limits.get(r) === v);
  return guaranteed && matching && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/** The QoS class of a pod spec (init containers included; pod-level resources win when they are set). */
export function qosClass(spec: { containers?: readonly unknown[]; initContainers?: readonly unknown[]; resources?: unknown }): QosClass {
  const podLevel = spec.resources as ResourceRequirements | undefined;
  if (podLevel && (podLevel.requests || podLevel.limits)) return qosOfLists([{ requests: effectiveRequests(podLevel), limits: podLevel.limits ?? {} }]);
  const all = [...(spec.initContainers ?? []), ...(spec.containers ?? [])] as { resources?: ResourceRequirements }[];
  return qosOfLists(all.map((c) => ({ requests: effectiveRequests(c.resources), limits: c.resources?.limits ?? {} })));
}
