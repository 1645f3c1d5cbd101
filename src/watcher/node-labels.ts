/** The labels of each Node the watcher has seen, as a hash: what a Node event changed of them. */
import { fnv1a32 } from '../common/hash.ts';
import type { KubeObject } from '../kube/types.ts';

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
