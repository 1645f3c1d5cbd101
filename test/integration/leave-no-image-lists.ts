/**
 * Runs after every integration test file: deletes the ImageLists the file left. They are cluster-scoped, so
 * the namespace a file deletes does not take them, and a watcher in a later file would count them among the
 * objects it knows, lists and enqueues (tests that count exactly what a watcher enqueued would see them).
 */
import { afterAll } from 'vitest';
import { imageListRef } from '../../src/api/group.ts';
import type { ImageList } from '../../src/api/image-list.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import { sandbox } from './support.ts';

afterAll(async () => {
  const { rest } = sandbox();
  const lists = await rest.list<ImageList>(imageListRef());
  for (const l of lists.items) {
    try {
      await rest.delete(imageListRef(l.metadata.name), { uid: l.metadata.uid });
    } catch (err) {
      if (!isKubeError(err, 'NotFound', 'Conflict')) throw err;
    }
  }
}, 60_000);
