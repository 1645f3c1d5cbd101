/**
 * Runs around every integration test file and leaves the shared sandbox as the file found it:
 * - the namespaces the file created are deleted (without waiting): their Apps' pods would otherwise stay on the
 *   sandbox's three nodes for the rest of the run, and a long run fills the nodes' pod capacity. A file that
 *   runs alone deletes every namespace that appeared while it ran; a file of the parallel project only those
 *   it made with freshNamespace (the other namespaces that appeared may be another file's, still in use);
 * - the ImageLists are deleted: they are cluster-scoped, so no namespace takes them, and a watcher in a later
 *   file would count them among the objects it knows, lists and enqueues. Files that make ImageLists run alone
 *   (vitest.config.ts).
 */
import { afterAll, beforeAll, inject } from 'vitest';
import { imageListRef } from '../../src/api/group.ts';
import type { ImageList } from '../../src/api/image-list.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import { core, type ResourceRef } from '../../src/kube/paths.ts';
import { namespacesMade, sandbox } from './support.ts';

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
  const made = inject('filesInParallel') ? [...namespacesMade] : (await namespaceNames()).filter((name) => !before.has(name));
  for (const name of made) await deleteQuietly(core('namespaces', undefined, name));
  const lists = await sandbox().rest.list<ImageList>(imageListRef());
  for (const l of lists.items) await deleteQuietly(imageListRef(l.metadata.name), l.metadata.uid);
}, 60_000);
