/**
 * The node's own ImageList, through the shared list/watch loop: a list and a watch narrowed to one name
 * with a field selector, so the daemon sees nothing of other nodes. The list may not exist yet, may be
 * created later, and may be deleted; every (re)list says which.
 */
import { imageListRef } from '../api/group.ts';
import type { ImageList } from '../api/image-list.ts';
import type { Logger } from '../common/log.ts';
import type { KubeRest } from '../kube/rest.ts';
import { listWatch, type WatchEventType } from '../kube/watch.ts';

export type SourceState = 'starting' | 'listing' | 'watching' | 'backoff';

export interface ImageListHandlers {
  /** The list exists, as it is now (after a list, or a watch event). */
  onObject(obj: ImageList): void;
  /** The list does not exist (not created yet, or deleted). */
  onAbsent(): void;
  onState?(state: SourceState): void;
  onEvent?(type: WatchEventType): void;
}

export function nodeFieldSelector(nodeName: string): string {
  return `metadata.name=${nodeName}`;
}

/** Runs until `signal` aborts (then rejects with AbortedError, as listWatch does). */
export function watchOwnImageList(
  deps: { rest: KubeRest; nodeName: string; watchdogMs: number; log: Logger; signal: AbortSignal },
  h: ImageListHandlers,
): Promise<void> {
  const own = (obj: ImageList): boolean => obj.metadata.name === deps.nodeName;
  return listWatch<ImageList>(
    {
      rest: deps.rest,
      ref: imageListRef(),
      fieldSelector: nodeFieldSelector(deps.nodeName),
      signal: deps.signal,
      log: deps.log,
      watchdogMs: deps.watchdogMs,
      pageSize: 10,
    },
    {
      onState: (state) => h.onState?.(state),
      onList: (items) => {
        const obj = items.find(own);
        if (obj) h.onObject(obj);
        else h.onAbsent();
      },
      onEvent: (ev) => {
        h.onEvent?.(ev.type);
        if (!own(ev.object)) return;
        if (ev.type === 'DELETED') h.onAbsent();
        else h.onObject(ev.object);
      },
    },
  );
}
