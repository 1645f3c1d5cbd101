/**
 * Kubernetes resource quantities (`100m`, `1.5`, `512Mi`, `1G`, `1e3`) and the pod QoS class, as far as the
 * simulated kubelet needs them: comparing resources and summing requests against node allocatable.
 */
import type { Container, Pod, ResourceList } from './k8s.ts';

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const QUANTITY_RE = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E))?$/;

/** The value of a quantity in base units (cores, bytes), or undefined when it is not a quantity. */
export function parseQuantity(q: string | undefined): number | undefined {
  if (q === undefined) return undefined;
  const m = QUANTITY_RE.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  if (m[2]) return n * (BINARY[m[2]] ?? 1);
  if (m[3]) return n * 10 ** Number(m[3].slice(1));
  return n * (DECIMAL[m[4] ?? ''] ?? 1);
}

/** Milli-units, rounded up as the apiserver does for cpu (`0.0001` → 1m). */
export function milli(q: string | undefined): number {
  const v = parseQuantity(q);
  return v === undefined ? 0 : Math.ceil(v * 1000 - 1e-9);
}

/** True when two resource lists hold the same quantities for the given resources (`1` equals `1000m`). */
export function sameQuantities(a: ResourceList | undefined, b: ResourceList | undefined, names: readonly string[]): boolean {
  return names.every((n) => sameQuantity(a?.[n], b?.[n]));
}

function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return milli(a) === milli(b);
}

/** The resource names an in-place resize may change. */
export const RESIZABLE = ['cpu', 'memory'] as const;

/** Effective requests of a container: explicit requests, or the limits when requests are unset (API defaulting). */
export function effectiveRequests(c: Pick<Container, 'resources'>): ResourceList {
  return { ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) };
}

/** Sum of the given requests in milli-units per resource name. */
export function sumMilli(lists: ResourceList[], names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of names) out[n] = lists.reduce((acc, l) => acc + milli(l[n]), 0);
  return out;
}

/** The pod's QoS class, as the apiserver computes it at creation (upstream GetPodQOS, cpu and memory only). */
export function getPodQOS(pod: Pick<Pod, 'spec'>): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  let anySet = false;
  let guaranteed = true;
  for (const c of all) {
    const req = effectiveRequests(c);
    const lim = c.resources?.limits ?? {};
    for (const r of RESIZABLE) {
      if (req[r] !== undefined || lim[r] !== undefined) anySet = true;
      if (lim[r] === undefined || req[r] === undefined || milli(req[r]) !== milli(lim[r])) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
