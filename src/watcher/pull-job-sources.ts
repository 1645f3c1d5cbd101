/**
 * The watch sources of ImagePullJobs: the jobs themselves (tracked; a job is settled once finished), and the
 * Nodes, as metadata only. A node that joins, leaves or changes its labels may be selected (or no longer) by a
 * job that is not finished, a completionPolicy Never job above all. The watcher keeps one number per node (a
 * hash of its labels) and re-enqueues the open jobs only when it changes; status and heartbeat updates of a
 * Node bring nothing. Nodes are watched only here: nothing else in the watcher reads them.
 */
import { imagePullJobRef } from '../api/group.ts';
import type { ImagePullJobStatus } from '../api/image-pull-job.ts';
import { isPullJobFinished } from '../api/pull-job-keys.ts';
import { fnv1a32 } from '../common/hash.ts';
import { core } from '../kube/paths.ts';
import type { KubeObject } from '../kube/types.ts';
import { parseKey, type ObjectKey } from '../queue/names.ts';
import { imagePullJobKey } from './keys.ts';
import type { SourceSpec } from './sources.ts';

/** The source names of the ImagePullJob watches (`imagepulljobs`, `imagepulljobs/<namespace>`). */
export const PULL_JOB_SOURCE = 'imagepulljobs';
export const isPullJobSource = (source: string): boolean => source === PULL_JOB_SOURCE || source.startsWith(`${PULL_JOB_SOURCE}/`);

/** Where the open jobs come from: the known keys last seen not settled (a job is settled once finished). */
export interface OpenJobs {
  unsettledWhere(source: (name: string) => boolean): string[];
}

export function openPullJobs(known: OpenJobs): ObjectKey[] {
  return known.unsettledWhere(isPullJobSource).map(parseKey);
}

function labelsHash(obj: KubeObject): number {
  const labels = Object.entries(obj.metadata?.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return fnv1a32(JSON.stringify(labels));
}

export class NodeLabels {
  private readonly byNode = new Map<string, number>();

  /** Whether this node event (type undefined: the node was listed) adds, removes or relabels a node. */
  changed(node: KubeObject, type?: string): boolean {
    const name = node.metadata?.name;
    if (!name) return false;
    if (type === 'DELETED') return this.byNode.delete(name);
    const hash = labelsHash(node);
    const before = this.byNode.get(name);
    this.byNode.set(name, hash);
    return before !== hash;
  }

  get size(): number {
    return this.byNode.size;
  }
}

/** The ImagePullJobs of one namespace (all when undefined). Their status is ebb's own output: status-only events bring nothing. */
export function pullJobSource(namespace: string | undefined): SourceSpec {
  return {
    name: namespace ? `${PULL_JOB_SOURCE}/${namespace}` : PULL_JOB_SOURCE,
    ref: imagePullJobRef(namespace),
    keyOf: imagePullJobKey,
    tracked: true,
    ignoreStatusOnly: true,
    settledOf: (o) => isPullJobFinished((o as { status?: ImagePullJobStatus }).status),
  };
}

/** The Nodes: no key of their own, the open pull jobs when a node joins, leaves or is relabelled. */
export function nodeSource(known: OpenJobs): SourceSpec {
  const labels = new NodeLabels();
  return {
    name: 'nodes',
    ref: core('nodes'),
    keyOf: () => undefined,
    tracked: false,
    relatedKeys: (o, type) => (labels.changed(o, type) ? openPullJobs(known) : []),
  };
}
