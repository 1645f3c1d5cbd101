/**
 * Resource quantities (`100m`, `1.5`, `512Mi`, `1G`, `1e3`) compared by value, and the pod QoS class computed
 * as the apiserver does at creation (cpu and memory only; pod-level resources win when set).
 */
import type { ResourceList, Resources } from './types.ts';

/** The resources an in-place resize may change. */
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

/** Milli-units, rounded up (the apiserver's cpu rounding: `0.0001` is 1m). */
function milli(q: string | undefined): number | undefined {
  const v = parseQuantity(q);
  return v === undefined ? undefined : Math.ceil(v * 1000 - 1e-9);
}

/** Same value (`1` equals `1000m`); two unset quantities are equal, an unparsable one equals only itself. */
export function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const ma = milli(a);
  const mb = milli(b);
  return ma === undefined || mb === undefined ? a === b : ma === mb;
}

/** Same cpu/memory requests and limits. Requests default to limits, as the apiserver defaults them. */
export function sameResizable(a: Resources | undefined, b: Resources | undefined): boolean {
  const ra = effectiveRequests(a);
  const rb = effectiveRequests(b);
  return RESIZABLE.every((r) => sameQuantity(ra[r], rb[r]) && sameQuantity(a?.limits?.[r], b?.limits?.[r]));
}

/** Explicit requests, or the limits where requests are unset (API defaulting). */
export function effectiveRequests(r: Resources | undefined): ResourceList {
  return { ...(r?.limits ?? {}), ...(r?.requests ?? {}) };
}

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const isSet = (q: string | undefined): q is string => q !== undefined && (parseQuantity(q) ?? 1) !== 0;

function qosOfLists(requests: ResourceList[], limits: ResourceList[]): QosClass {
  const anySet = [...requests, ...limits].some((l) => RESIZABLE.some((r) => isSet(l[r])));
  if (!anySet) return 'BestEffort';
  const guaranteed = limits.every((lim, i) => RESIZABLE.every((r) => isSet(lim[r]) && sameQuantity(requests[i]?.[r] ?? lim[r], lim[r])));
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** The QoS class of a pod spec (upstream GetPodQOS, restricted to cpu and memory). */
export function qosClass(spec: { containers?: readonly unknown[]; initContainers?: readonly unknown[]; resources?: unknown }): QosClass {
  const podLevel = spec.resources as Resources | undefined;
  if (podLevel && (podLevel.requests || podLevel.limits)) {
    return qosOfLists([effectiveRequests(podLevel)], [podLevel.limits ?? {}]);
  }
  const all = [...(spec.initContainers ?? []), ...(spec.containers ?? [])] as { resources?: Resources }[];
  return qosOfLists(
    all.map((c) => effectiveRequests(c.resources)),
    all.map((c) => c.resources?.limits ?? {}),
  );
}

/** Only the cpu/memory requests and limits of `r` (what pods/resize is asked to set). */
export function resizableOf(r: Resources | undefined): Resources {
  const out: Resources = {};
  for (const part of ['requests', 'limits'] as const) {
    const entries = RESIZABLE.flatMap((n) => (r?.[part]?.[n] !== undefined ? [[n, r[part][n]] as const] : []));
    if (entries.length > 0) out[part] = Object.fromEntries(entries);
  }
  return out;
}
