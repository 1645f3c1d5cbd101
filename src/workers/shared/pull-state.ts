/**
 * Where a node's pulls of an image set stand, as its daemon reports them in the node's ImageList: shared by the
 * App's pre-warming and the ImagePullJob reconcile, which request pulls the same way (an ImageList entry set
 * labelled with the set's key) and count the same states against the pull budget.
 */
import { ImagePhase, type ImageList } from '../../api/image-list.ts';
import type { ClusterStored } from '../../kube/types.ts';
import { fnv1a32 } from '../../common/hash.ts';

const DETAIL_MAX = 200;

/**
 * Where a requested node stands. Only `pulling` holds a `parallelism` slot and a share of the pull budget:
 * `deferred` (its daemon holds the pull back for disk) and `unanswered` (no daemon reported anything in time) wait
 * on the node, not on a registry.
 */
export type NodeState =
  { state: 'pulling' } | { state: 'pulled' } | { state: 'failed'; message: string } | { state: 'deferred'; message: string } | { state: 'unanswered' };

/** The label value naming an image set: 8 hex digits of FNV-1a over the sorted images. */
export function imagesKey(images: readonly string[]): string {
  return fnv1a32([...images].sort().join('\n'))
    .toString(16)
    .padStart(8, '0');
}

/** Where the daemon stands on `images` in `list`: pulling until each one is Pulled, Failed or Deferred. */
export function nodeState(list: ClusterStored<ImageList>, images: readonly string[]): NodeState {
  const phases = new Map((list.status?.images ?? []).map((s) => [s.image, s]));
  const failed: string[] = [];
  const deferred: string[] = [];
  for (const image of images) {
    const s = phases.get(image);
    const detail = (fallback: string): string => (s?.message ?? fallback).slice(0, DETAIL_MAX);
    if (s?.phase === ImagePhase.failed) failed.push(`${image}: ${detail('pull failed')}`);
    else if (s?.phase === ImagePhase.deferred) deferred.push(detail('pull deferred'));
    else if (s?.phase !== ImagePhase.pulled) return { state: 'pulling' };
  }
  if (failed[0] !== undefined) return { state: 'failed', message: failed[0] };
  return deferred[0] === undefined ? { state: 'pulled' } : { state: 'deferred', message: deferred[0] };
}
