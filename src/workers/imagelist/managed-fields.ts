/**
 * Reads which ImageList entries a field manager owns, from `metadata.managedFields`. A list-map entry appears
 * in `fieldsV1` as `"k:{\"image\":\"<ref>\"}"` under `f:spec` → `f:images`.
 */
import { isRecord } from '../../common/guards.ts';
import type { ManagedFieldsEntry } from '../../kube/types.ts';

function child(node: unknown, key: string): unknown {
  return isRecord(node) ? node[key] : undefined;
}

/** The image of a `k:{"image":…}` key, or undefined for any other key. */
function imageOfKey(key: string): string | undefined {
  if (!key.startsWith('k:')) return undefined;
  try {
    const parsed: unknown = JSON.parse(key.slice(2));
    const image = child(parsed, 'image');
    return typeof image === 'string' ? image : undefined;
  } catch {
    return undefined;
  }
}

/** The images whose spec entries `manager` owns (through an Apply on the main resource). */
export function imagesOwnedBy(managedFields: readonly ManagedFieldsEntry[] | undefined, manager: string): Set<string> {
  const owned = new Set<string>();
  for (const mf of managedFields ?? []) {
    if (mf.manager !== manager || mf.operation !== 'Apply' || (mf.subresource ?? '') !== '') continue;
    const images = child(child(mf.fieldsV1, 'f:spec'), 'f:images');
    if (!isRecord(images)) continue;
    for (const key of Object.keys(images)) {
      const image = imageOfKey(key);
      if (image !== undefined) owned.add(image);
    }
  }
  return owned;
}
