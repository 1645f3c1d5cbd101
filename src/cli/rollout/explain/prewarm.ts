/** Pure: the pre-warm of the update revision's images, node by node, from the ImageLists' status. */
import type { App } from '../../../api/app.ts';
import { ImagePhase, type ImageList } from '../../../api/image-list.ts';
import type { Pod } from '../../../kube/types.ts';
import { getPodRevision } from '../../../workers/app/pods/predicates.ts';
import { templateImages } from '../../../workers/app/prewarm/targets.ts';
import type { NodePrewarm, NodePullState, PrewarmExplanation } from './model.ts';

const MESSAGE_MAX = 160;

function stateOf(phases: readonly string[]): NodePullState {
  if (phases.length > 0 && phases.every((p) => p === ImagePhase.pulled)) return 'Pulled';
  if (phases.some((p) => p === ImagePhase.failed)) return 'Failed';
  if (phases.some((p) => p === ImagePhase.pulling)) return 'Pulling';
  if (phases.some((p) => p === ImagePhase.deferred)) return 'Deferred';
  return 'Pending';
}

/** One node: each image of `images` as its ImageList's status reports it (Pending until the daemon says more). */
export function nodePrewarm(list: ImageList, images: readonly string[], pods: string[]): NodePrewarm {
  const reported = new Map((list.status?.images ?? []).map((s) => [s.image, s]));
  const rows = images.map((image) => {
    const s = reported.get(image);
    return {
      image,
      phase: s?.phase ?? ImagePhase.pending,
      ...(s?.attempts ? { attempts: s.attempts } : {}),
      ...(s?.message ? { message: s.message.slice(0, MESSAGE_MAX) } : {}),
      ...(s?.lastPullTime ? { lastPullTime: s.lastPullTime } : {}),
    };
  });
  return {
    node: list.metadata.name ?? '',
    state: stateOf(rows.map((r) => r.phase)),
    pulled: rows.filter((r) => r.phase === ImagePhase.pulled).length,
    images: rows,
    pods,
  };
}

/**
 * The nodes the App pre-warms (its ImageLists) and the nodes of its pods still to update that have no entry
 * yet (NotRequested), with the pods of each. Undefined when the App has no pre-warm and no ImageList.
 */
/** The App's pods still to update (not terminating), by the node they run on. */
function outdatedByNode(app: App, pods: readonly Pod[]): Map<string, string[]> {
  const update = app.status?.updateRevision;
  const out = new Map<string, string[]>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (!node || pod.metadata.deletionTimestamp || getPodRevision(pod) === update) continue;
    out.set(node, [...(out.get(node) ?? []), pod.metadata.name ?? '']);
  }
  return out;
}

export function explainPrewarm(app: App, pods: readonly Pod[], lists: readonly ImageList[] | undefined): PrewarmExplanation | undefined {
  const status = app.status?.prewarm;
  if (!status && app.spec.imagePrewarm?.enabled !== true && (lists ?? []).length === 0) return undefined;
  const images = templateImages(app.spec.template);
  const byNode = outdatedByNode(app, pods);
  const nodes = (lists ?? []).map((l) => nodePrewarm(l, images, byNode.get(l.metadata.name ?? '') ?? []));
  const listed = new Set(nodes.map((n) => n.node));
  for (const [node, names] of byNode) if (!listed.has(node)) nodes.push({ node, state: 'NotRequested', pulled: 0, images: [], pods: names });
  nodes.sort((a, b) => a.node.localeCompare(b.node, 'en', { numeric: true }));
  const counts = status ?? { nodesRequested: 0, nodesPulled: 0, nodesFailed: 0 };
  return { images, nodesRequested: counts.nodesRequested, nodesPulled: counts.nodesPulled, nodesFailed: counts.nodesFailed, nodes };
}
