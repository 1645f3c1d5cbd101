/**
 * The one watch of Nodes, metadata only. Two things depend on where nodes are and what labels they carry: the
 * Apps with a warm pool (`warm-pools.ts`) and the ImagePullJobs not finished (`pull-job-sources.ts`). The watcher
 * keeps one number per node (a hash of its labels), never the objects; a node that joins, leaves or is relabelled
 * enqueues the pools it concerns and the open jobs, and a status or heartbeat update enqueues nothing.
 */
import { fnv1a32 } from '../common/hash.ts';
import { core } from '../kube/paths.ts';
import type { KubeObject } from '../kube/types.ts';
import { openPullJobs, type OpenJobs } from './pull-job-sources.ts';
import type { SourceSpec } from './sources.ts';
import type { WarmPools } from './warm-pools.ts';

/** What a Node event changed: nothing, a node seen for the first time, new labels, or a node gone. */
export type NodeChange = 'none' | 'added' | 'relabelled' | 'deleted';

function labelsHash(obj: KubeObject): number {
  const labels = Object.entries(obj.metadata?.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return fnv1a32(JSON.stringify(labels));
}

export class NodeLabels {
  private readonly byNode = new Map<string, number>();

  /** What this node event (type undefined: the node was listed) changed. */
  change(node: KubeObject, type?: string): NodeChange {
    const name = node.metadata?.name;
    if (!name) return 'none';
    if (type === 'DELETED') return this.byNode.delete(name) ? 'deleted' : 'none';
    const hash = labelsHash(node);
    const before = this.byNode.get(name);
    this.byNode.set(name, hash);
    if (before === hash) return 'none';
    return before === undefined ? 'added' : 'relabelled';
  }

  get size(): number {
    return this.byNode.size;
  }
}

/** The Nodes: no key of their own; the warm-pool Apps and the open pull jobs a change concerns. */
export function nodeSource(pools: WarmPools, jobs?: OpenJobs): SourceSpec {
  const labels = new NodeLabels();
  return {
    name: 'nodes',
    ref: core('nodes'),
    keyOf: () => undefined,
    tracked: false,
    relatedKeys: (o, type) => {
      const change = labels.change(o, type);
      if (change === 'none') return [];
      return [...pools.nodeEvent(o, change), ...(jobs ? openPullJobs(jobs) : [])];
    },
  };
}
