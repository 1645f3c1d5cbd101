/**
 * A compact fingerprint of the metadata a reconcile acts on: generation (spec changes), deletionTimestamp,
 * labels, annotations, finalizers and owners. An App watch event that leaves it unchanged only changed status
 * (mostly ebb's own status writes) or managed-fields bookkeeping, and brings no reconcile.
 */
import type { ObjectMeta } from './keys.ts';

/** FNV-1a, 32 bits: a number per key is all the watcher keeps (no object cache). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Object keys sorted, so the same map always serialises the same way. */
function sorted(map: Record<string, string> | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function metaFingerprint(obj: ObjectMeta): number {
  const m = obj.metadata ?? {};
  return fnv1a(
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
