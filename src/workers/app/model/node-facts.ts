import type { Taint } from '../../../kube/tolerations.ts';

/** What pre-warming reads of a Node. */
export interface NodeFacts {
  name: string;
  labels: Readonly<Record<string, string>>;
  taints: readonly Taint[];
  unschedulable: boolean;
}
