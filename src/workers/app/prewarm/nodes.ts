/**
 * The nodes pre-warming chooses without a pod on them yet (pure):
 *
 * - a warm pool (`imagePrewarm.nodeSelector`): every node whose labels include the selector's and whose taints the
 *   template tolerates, nodes that join later included (the watcher enqueues the App when a Node appears or its labels change);
 * - a scale-up: while pods of the App wait to be created or to be placed (and no rollout is in progress), the nodes
 *   they can land on (`placement.ts`), those running the fewest of the App's pods first, at most
 *   `SCALE_UP_NODES_PER_POD` per waiting pod. With a warm pool, the pool is where pods are expected: its nodes
 *   are the scale-up's too.
 *
 * Nodes are read (`read.ts`) only when one of the two has something to do, by a label selector: the pool's, or
 * else the template's `nodeSelector` (the matcher judges the rest).
 */
import type { App } from '../../../api/app.ts';
import type { PodTemplateSpec } from '../../../api/pod-template.ts';
import { matchesLabels } from '../../../kube/labels.ts';
import type { Named, Pod, Stored } from '../../../kube/types.ts';
import { untoleratedTaint, type Taint } from '../../../kube/tolerations.ts';
import { canPlace, tolerationsOf } from './placement.ts';
import type { NodeFacts } from '../model/node-facts.ts';

/** Nodes pre-warmed per pod a scale-up waits to place: a node the scheduler picks and one to spare. */
export const SCALE_UP_NODES_PER_POD = 2;

/** The warm pool's node selector, or undefined when the App has no pool (unset, empty, or pre-warm disabled). */
export function poolSelector(app: Pick<Stored<App>, 'spec'>): Readonly<Record<string, string>> | undefined {
  const p = app.spec.imagePrewarm;
  if (p?.enabled !== true || p.nodeSelector === undefined || Object.keys(p.nodeSelector).length === 0) return undefined;
  return p.nodeSelector;
}

const selectorOf = (labels: Readonly<Record<string, string>>): string =>
  Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** The label selector nodes are listed by: the pool's, else the template's nodeSelector ('' lists every node). */
export function nodeReadSelector(app: Pick<Stored<App>, 'spec'>): string {
  const pool = poolSelector(app);
  if (pool) return selectorOf(pool);
  return selectorOf(((app.spec.template.spec as Record<string, unknown> | undefined)?.['nodeSelector'] ?? {}) as Record<string, string>);
}

/** A Node object as pre-warming reads it. */
export function nodeFacts(node: { metadata: { name?: string; labels?: Record<string, string> }; spec?: Record<string, unknown> }): NodeFacts {
  const taints = (node.spec?.['taints'] ?? []) as Taint[];
  return { name: node.metadata.name ?? '', labels: node.metadata.labels ?? {}, taints, unschedulable: node.spec?.['unschedulable'] === true };
}

/**
 * The pool's nodes, by name: those whose labels include the selector's and whose NoSchedule/NoExecute taints the
 * template tolerates (a pod of the App could never run on the others, so their images would only fill the node).
 */
export function poolNodes(selector: Readonly<Record<string, string>>, template: PodTemplateSpec | undefined, nodes: readonly NodeFacts[]): string[] {
  const tolerations = tolerationsOf(template);
  return nodes
    .filter((n) => matchesLabels(n.labels, selector) && untoleratedTaint(tolerations, n, false) === undefined)
    .map((n) => n.name)
    .sort();
}

const nodeOf = (pod: Pod): string | undefined => {
  const node = pod.spec?.['nodeName'];
  return typeof node === 'string' && node !== '' ? node : undefined;
};

/** A pod kube-scheduler tried and could not place yet (condition PodScheduled False), not going away. */
function unschedulable(pod: Named<Pod>): boolean {
  if (nodeOf(pod) !== undefined || pod.metadata.deletionTimestamp !== undefined) return false;
  const conditions = (pod.status?.['conditions'] ?? []) as { type?: string; status?: string }[];
  return conditions.some((c) => c.type === 'PodScheduled' && c.status === 'False');
}

/**
 * How many replicas wait for a node: ordinals with no pod even after this plan (creation deferred: OrderedReady,
 * the scale-up limit) and pods the scheduler could not place yet. A pod the plan creates now is not counted:
 * the scheduler places it within moments, before any pull could finish. `replicas` is the projected set.
 */
export function unplacedReplicas(ordinals: readonly number[], replicas: ReadonlyMap<number, Named<Pod>>): number {
  let n = 0;
  for (const ordinal of ordinals) {
    const pod = replicas.get(ordinal);
    if (!pod || unschedulable(pod)) n++;
  }
  return n;
}

/** The nodes a scale-up's waiting pods can land on, fewest of the App's pods first, at most `SCALE_UP_NODES_PER_POD` per pod. */
export function scaleUpNodes(template: PodTemplateSpec | undefined, nodes: readonly NodeFacts[], unplaced: number, pods: readonly Named<Pod>[]): string[] {
  if (unplaced <= 0) return [];
  const load = new Map<string, number>();
  for (const pod of pods) {
    const node = nodeOf(pod);
    if (node) load.set(node, (load.get(node) ?? 0) + 1);
  }
  return nodes
    .filter((n) => canPlace(template, n))
    .map((n) => ({ name: n.name, load: load.get(n.name) ?? 0 }))
    .sort((a, b) => a.load - b.load || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, unplaced * SCALE_UP_NODES_PER_POD)
    .map((n) => n.name);
}
