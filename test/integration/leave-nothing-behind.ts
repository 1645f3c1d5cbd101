/**
 * Runs around every integration test file and leaves its worker's sandbox (no other file uses it meanwhile,
 * support.ts) as the file found it, for the next file on it:
 * - every namespace that appeared while the file ran is deleted (without waiting): their Apps' pods would
 *   otherwise stay on the sandbox's three nodes for the rest of the run, and a long run fills the nodes' pod
 *   capacity;
 * - the ImageLists are deleted: they are cluster-scoped, so no namespace takes them, and a watcher in a later
 *   file would count them among the objects it knows, lists and enqueues.
 */
import { afterAll, beforeAll } from 'vitest';
import { imageListRef } from '../../src/api/group.ts';
import type { ImageList } from '../../src/api/image-list.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import { core, type ResourceRef } from '../../src/kube/paths.ts';
import { sandbox } from './support.ts';

let before = new Set<string>();

const namespaceNames = async (): Promise<string[]> =>
  (await sandbox().rest.list<{ metadata: { name: string } }>(core('namespaces'))).items.map((n) => n.metadata.name);

async function deleteQuietly(ref: ResourceRef, uid?: string): Promise<void> {
  try {
    await sandbox().rest.delete(ref, uid ? { uid } : {});
  } catch (err) {
    if (!isKubeError(err, 'NotFound', 'Conflict')) throw err;
  }
}

beforeAll(async () => {
  before = new Set(await namespaceNames());
}, 60_000);

afterAll(async () => {
  const made = (await namespaceNames()).filter((name) => !before.has(name));
  for (const name of made) await deleteQuietly(core('namespaces', undefined, name));
  const lists = await sandbox().rest.list<ImageList>(imageListRef());
  for (const l of lists.items) await deleteQuietly(imageListRef(l.metadata.name), l.metadata.uid);
}, 60_000);
