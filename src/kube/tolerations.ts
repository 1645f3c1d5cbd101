/**
 * Node taints and pod tolerations, judged the way kube-scheduler's TaintToleration filter does (pure): a
 * NoSchedule or NoExecute taint keeps a pod off a node unless one of its tolerations tolerates it. Shared by
 * every planner that chooses nodes for images (warm pools, scale-ups, ImagePullJobs).
 */

export interface Taint {
  key: string;
  value?: string | undefined;
  effect: string;
}

export interface Toleration {
  key?: string | undefined;
  operator?: string | undefined;
  value?: string | undefined;
  effect?: string | undefined;
}

/** What the predicate reads of a Node: its taints, and whether it is cordoned. */
export interface TaintedNode {
  taints: readonly Taint[];
  unschedulable?: boolean | undefined;
}

/** The taint kube-scheduler's NodeUnschedulable filter stands for a cordoned node. */
export const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

/** Whether `toleration` tolerates `taint` (upstream `ToleratesTaint`). */
export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect !== undefined && toleration.effect !== '' && toleration.effect !== taint.effect) return false;
  if (toleration.key !== undefined && toleration.key !== '' && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
    case '':
      return (toleration.key ?? '') !== '' && (toleration.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

const blocking = (t: Taint): boolean => t.effect === 'NoSchedule' || t.effect === 'NoExecute';

/**
 * The first NoSchedule or NoExecute taint of `node` that `tolerations` do not tolerate. A cordon counts as the
 * `node.kubernetes.io/unschedulable` taint only with `cordon` (a scale-up's nodes; a warm pool keeps a cordoned
 * node's entries: it is drained for a while, not left).
 */
export function untoleratedTaint(tolerations: readonly Toleration[], node: TaintedNode, cordon = true): Taint | undefined {
  const taints = cordon && node.unschedulable === true ? [...node.taints, UNSCHEDULABLE_TAINT] : node.taints;
  return taints.find((t) => blocking(t) && !tolerations.some((tol) => tolerates(tol, t)));
}
