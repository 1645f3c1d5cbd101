/**
 * How often pre-warming paid off (pure): the pods of the update revision that were created on a node after this
 * App's pre-warm pull there had finished, so they found their images on the node. A pod recreated by a
 * `ReCreate` rollout or created by a scale-up counts when kube-scheduler put it on a warm node; a pod updated in
 * place keeps its creation time and never counts. Reported as `status.prewarm.podsOnWarmNodes` while pre-warming
 * goes on, from what the plan reads anyway (the pods and this App's ImageLists).
 */
import type { ImageList } from '../../../api/image-list.ts';
import { ImagePhase } from '../../../api/image-list.ts';
import type { ClusterStored, Named, Pod } from '../../../kube/types.ts';
import { getPodRevision } from '../pods/predicates.ts';

/** When every one of `images` was last pulled on the list's node, or undefined while one is not Pulled. */
function warmSince(list: ClusterStored<ImageList>, images: readonly string[]): number | undefined {
  const byImage = new Map((list.status?.images ?? []).map((s) => [s.image, s]));
  let since = -Infinity;
  for (const image of images) {
    const s = byImage.get(image);
    const at = s?.phase === ImagePhase.pulled && s.lastPullTime ? Date.parse(s.lastPullTime) : NaN;
    if (Number.isNaN(at)) return undefined;
    since = Math.max(since, at);
  }
  return since;
}

/**
 * The pods of `revision` created on a node whose ImageList (of this App, listing `images`) reported every image
 * pulled before the pod's creation.
 */
export function podsOnWarmNodes(pods: readonly Named<Pod>[], revision: string, images: readonly string[], lists: readonly ClusterStored<ImageList>[]): number {
  const warm = new Map<string, number>();
  for (const list of lists) {
    const listed = new Set((list.spec?.images ?? []).map((e) => e.image));
    const since = images.every((i) => listed.has(i)) ? warmSince(list, images) : undefined;
    if (since !== undefined) warm.set(list.metadata.name, since);
  }
  let n = 0;
  for (const pod of pods) {
    const node = pod.spec?.['nodeName'];
    const since = typeof node === 'string' ? warm.get(node) : undefined;
    const created = pod.metadata.creationTimestamp ? Date.parse(pod.metadata.creationTimestamp) : NaN;
    // creationTimestamp has whole seconds: a pod created in the second the pull ended counts.
    if (since !== undefined && getPodRevision(pod) === revision && created >= Math.floor(since / 1000) * 1000) n++;
  }
  return n;
}
