/**
 * One object in the view: the id of the watch list it was written under (`l`), and the object's projection
 * (`o`), or `big` when its projection is over VIEW_OBJECT_BYTES (a tenant's oversized object is not stored;
 * a reconcile of its App reads fresh), or `gone` for a pod deleted (or gone to another owner) with its uid and
 * last resourceVersion: the tombstone tells a view that has seen ebb's write of that pod from one that has not
 * (one per pod name, removed with the App).
 */
import type { KubeObject } from '../kube/types.ts';

/** The largest projection the view stores of one object. */
export const VIEW_OBJECT_BYTES = 128 * 1024;

export type Entry = { l: string; o: KubeObject } | { l: string; big: true } | { l: string; gone: { uid: string; rv: string } };

/** The tombstone of a pod `obj` written under list `listId`. */
export function encodeTombstone(listId: string, obj: KubeObject): string {
  return JSON.stringify({ l: listId, gone: { uid: obj.metadata?.uid ?? '', rv: obj.metadata?.resourceVersion ?? '' } });
}

/** The entry's JSON for `projection` written under list `listId`. */
export function encodeEntry(listId: string, projection: KubeObject, limitBytes = VIEW_OBJECT_BYTES): string {
  const text = JSON.stringify({ l: listId, o: projection });
  return Buffer.byteLength(text) > limitBytes ? JSON.stringify({ l: listId, big: true }) : text;
}

/** The entry a field holds; undefined for one that does not parse as an entry (read as absent, never trusted). */
export function decodeEntry(text: string | undefined): Entry | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as { l?: unknown; o?: unknown; big?: unknown; gone?: { uid?: unknown; rv?: unknown } };
    if (typeof v.l !== 'string') return undefined;
    if (v.big === true) return { l: v.l, big: true };
    if (v.gone) return typeof v.gone.uid === 'string' && typeof v.gone.rv === 'string' ? { l: v.l, gone: { uid: v.gone.uid, rv: v.gone.rv } } : undefined;
    return typeof v.o === 'object' && v.o !== null ? { l: v.l, o: v.o } : undefined;
  } catch {
    return undefined;
  }
}
