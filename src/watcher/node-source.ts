/**
 * The one watch of Nodes, metadata only. Two things depend on where nodes are and what labels they carry: the
 * Apps with a warm pool (`warm-pools.ts`) and the ImagePullJobs not finished (`pull-job-sources.ts`). The watcher
 * keeps one number per node (a hash of its labels), never the objects; a node that joins, leaves or is relabelled
 * enqueues the pools it concerns and the open jobs, and a status or heartbeat update enqueues nothing.
 */
import { core } from '../kube/paths.ts';
import { NodeLabels } from './node-labels.ts';
import { openPullJobs, type OpenJobs } from './pull-job-sources.ts';
import type { SourceSpec } from './source-spec.ts';
import type { WarmPools } from './warm-pools.ts';

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
