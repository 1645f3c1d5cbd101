/**
 * A compact fingerprint of the metadata a reconcile acts on: generation (spec changes), deletionTimestamp,
 * labels, annotations, finalizers and owners. An App watch event that leaves it unchanged only changed status
 * (mostly ebb's own status writes) or managed-fields bookkeeping, and brings no reconcile.
 */
import { fnv1a32 } from '../common/hash.ts';
import type { KubeObject } from '../kube/types.ts';

/** Object keys sorted, so the same map always serialises the same way. */
function sorted(map: Record<string, string> | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A 32-bit hash (FNV-1a): a number per key is all the watcher keeps (no object cache). */
export function metaFingerprint(obj: KubeObject): number {
  const m = obj.metadata ?? {};
  return fnv1a32(
    JSON.stringify([
      m.uid ?? '',
      m.generation ?? 0,
      m.deletionTimestamp ?? '',
      sorted(m.labels),
      sorted(m.annotations),
      m.finalizers ?? [],
      (m.ownerReferences ?? []).map((r) => [r.uid ?? '', r.controller === true]),
    ]),
  );
}
