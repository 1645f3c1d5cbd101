/**
 * Which nodes an App pre-warms, read off the planner's own view of the rollout (pure):
 *
 * - the update order is the rolling update's (`outdatedOrdinals`: highest ordinal first), down to the spec
 *   partition: pods below it are not going to be updated, so their nodes are never pre-warmed; a canary step
 *   only holds pods back for a while, so it does not shorten the order;
 * - the pods the plan starts updating now, and pods whose in-place update is under way, are past pre-warming;
 * - while the rollout runs, the nodes of the next `lookahead` pods: `imagePrewarm.lookahead` when set, else
 *   measured from pull times and the rollout's pace (`lookahead.ts`); while it waits, so that no pod can be
 *   updated now (`rollingUpdate.paused`, a canary pause step, or OnDelete, which waits for a person), the nodes
 *   of every pod left to update. How many of them pull at once is `parallelism` and the cluster's pull budget.
 *   The update policy makes no difference: a pod about to be recreated gets its node warmed like one about to
 *   be updated in place, and kube-scheduler's ImageLocality score then favours that node for its replacement;
 * - beside the rollout, a warm pool's nodes and the nodes a scale-up's waiting pods can land on (`nodes.ts`),
 *   with the same images (the update revision's: the template in force) under the same field manager;
 * - pre-warming ends once every replica is available (and, from the spec partition up, at the update revision):
 *   until then its entries stay, so a pod deleted to be recreated keeps its node's, and the status counts the
 *   pods that landed on a warm node (`landing.ts`) to the last one.
 *
 * The ImageLists are read only when pre-warming has something to do: enabled with pods left to update, a warm
 * pool, pods waiting for a node, or entries to clear (`status.prewarm` present); the Nodes only for a pool or a
 * scale-up. A steady App without a pool costs no request.
 */
import type { App } from '../../../api/app.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import type { ImageList } from '../../../api/image-list.ts';
import { ConditionType, Reason } from '../../../api/keys.ts';
import type { PodTemplateSpec } from '../../../api/pod-template.ts';
import { podIsUpdatingInPlace } from '../../inplace/index.ts';
import type { Action } from '../model/actions.ts';
import type { NeedsInput } from '../model/plan.ts';
import type { CanaryOutcome } from '../rollout/canary.ts';
import { setCondition } from '../../shared/conditions.ts';
import type { ClusterStored, Named, Pod, Stored } from '../../../kube/types.ts';
import { projectPodWrites } from '../status/planned.ts';
import { getOrdinal, getPodRevision, isRunningAndAvailable, isTerminating } from '../pods/predicates.ts';
import type { PodSet } from '../pods/pod-set.ts';
import { templateOf } from '../revisions/revisions.ts';
import { outdatedOrdinals } from '../rollout/update-plan.ts';
import { adaptiveLookahead, expectedPullMs, rolloutPace } from './lookahead.ts';
import { planPrewarm, prewarmIdentity } from './plan.ts';
import type { PrewarmOutcome } from '../model/prewarm-outcome.ts';
import { waitingSince } from './policy.ts';
import type { PrewarmPolicy } from '../model/prewarm-policy.ts';
import { poolNodes, poolSelector, scaleUpNodes, unplacedReplicas } from './nodes.ts';
import { podsOnWarmNodes } from './landing.ts';
import type { NodeFacts } from '../model/node-facts.ts';

/** The pods left to update, in update order. */
interface RolloutOrder {
  /** Pods to update that are not being updated now, in update order. */
  next: Named<Pod>[];
  /** Pods at or above the spec partition not at the update revision yet: 0 once the rollout is over. */
  remaining: number;
  /** No pod can be updated now (pause, paused, OnDelete): every remaining pod's node is a target. */
  waiting: boolean;
}

export interface RolloutView {
  /** The pod set; its rollout settings give the floor of the update order (the spec partition) and OnDelete. */
  set: PodSet;
  /** `rollingUpdate.paused`, or a canary `pause: {}` being entered now. */
  paused: boolean;
  canary: CanaryOutcome;
  /** The plan's actions so far: pods it deletes or starts updating are past pre-warming. */
  actions: readonly Action[];
}

/** The images of a template's containers and init containers, each once, sorted. */
export function templateImages(template: PodTemplateSpec | undefined): string[] {
  const spec = template?.spec;
  return [...new Set([...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((c) => c.image))].sort();
}

/** The template's first image pull Secret, in `namespace` (an ImageList entry names one Secret). */
export function firstPullSecret(template: PodTemplateSpec | undefined, namespace: string): { namespace: string; name: string } | undefined {
  const name = (template?.spec?.['imagePullSecrets'] as { name?: string }[] | undefined)?.find((s) => typeof s.name === 'string' && s.name !== '')?.name;
  return name === undefined ? undefined : { namespace, name };
}

const nodeOf = (pod: Pod): string | undefined => {
  const node = pod.spec?.['nodeName'];
  return typeof node === 'string' && node !== '' ? node : undefined;
};

function rolloutOrder(view: RolloutView): RolloutOrder {
  const { set } = view;
  const name = set.app.metadata.name;
  const replicas = new Map<number, Named<Pod>>();
  for (const pod of projectPodWrites([...set.replicas.values()], view.actions, set.now)) replicas.set(getOrdinal(name, pod.metadata.name), pod);
  const order = outdatedOrdinals({ ...set, replicas }, set.rollout.partition);
  const next = order.flatMap((ordinal) => {
    const pod = replicas.get(ordinal);
    return pod && !podIsUpdatingInPlace(pod) ? [pod] : [];
  });
  const waiting = !set.rollout.rolling || view.paused || view.canary.pause !== undefined;
  return { next, remaining: order.length, waiting };
}

/** The nodes of the first `lookahead` pods of `order` (all of them while it waits, or when undefined), each once. */
function targetNodes(order: RolloutOrder, lookahead: number | undefined): string[] {
  const nodes = new Set<string>();
  for (const pod of order.waiting || lookahead === undefined ? order.next : order.next.slice(0, lookahead)) {
    const node = nodeOf(pod);
    if (node) nodes.add(node);
  }
  return [...nodes];
}

const INERT: PrewarmOutcome = { actions: [], status: undefined, condition: undefined };

/** The pods left to update, or undefined when pre-warming is off or has nothing left to do. */
function activeOrder(app: Stored<App>, view: RolloutView | undefined): RolloutOrder | undefined {
  if (!view || app.spec.imagePrewarm?.enabled !== true) return undefined;
  const order = rolloutOrder(view);
  return order.remaining > 0 ? order : undefined;
}

/** What pre-warming has to do beside a rollout: a warm pool, and pods of a scale-up waiting for a node. */
interface NodeWork {
  pool: Readonly<Record<string, string>> | undefined;
  /** Replicas with no node yet, counted only while no rollout is in progress. */
  unplaced: number;
  pods: Named<Pod>[];
  /**
   * Entries are kept (nothing new is requested) until every replica is available: pre-warming ends with the
   * rollout or scale-up it served, and its status counts the last pods too (`podsOnWarmNodes`).
   */
  settling: boolean;
}

function nodeWork(app: Stored<App>, view: RolloutView | undefined, order: RolloutOrder | undefined): NodeWork | undefined {
  if (!view || app.spec.imagePrewarm?.enabled !== true) return undefined;
  const name = app.metadata.name;
  const replicas = new Map<number, Named<Pod>>();
  for (const pod of projectPodWrites([...view.set.replicas.values()], view.actions, view.set.now)) replicas.set(getOrdinal(name, pod.metadata.name), pod);
  const unplaced = order ? 0 : unplacedReplicas(view.set.ordinals, replicas);
  const pool = poolSelector(app);
  const { minReadySeconds, now, update, rollout } = view.set;
  // Below the spec partition pods stay at the current revision: those only have to be available.
  const done = (o: number, pod: Named<Pod> | undefined): boolean =>
    pod !== undefined &&
    !isTerminating(pod) &&
    (o < rollout.partition || getPodRevision(pod) === update.metadata.name) &&
    isRunningAndAvailable(pod, minReadySeconds, now);
  const settling = !order && app.status?.prewarm !== undefined && view.set.ordinals.some((o) => !done(o, replicas.get(o)));
  return pool || unplaced > 0 || settling ? { pool, unplaced, pods: [...replicas.values()], settling } : undefined;
}

/** Rollout targets first (the nearest in time), then the pool's nodes, then a scale-up's, each once. */
function mergedTargets(first: readonly string[], template: PodTemplateSpec | undefined, work: NodeWork | undefined, nodes: readonly NodeFacts[]): string[] {
  if (!work) return [...first];
  const pool = work.pool ? poolNodes(work.pool, template, nodes) : [];
  // With a pool, the pool is where the App's pods go: a scale-up warms it, not the rest of the cluster.
  const scaleUp = work.pool ? [] : scaleUpNodes(template, nodes, work.unplaced, work.pods);
  return [...new Set([...first, ...pool, ...scaleUp])];
}

/** `imagePrewarm.lookahead`, else measured from the daemons' pull times and the rollout's pace. */
function lookaheadOf(app: Stored<App>, view: RolloutView, lists: readonly ClusterStored<ImageList>[], images: readonly string[]): number | undefined {
  const { set } = view;
  return (
    app.spec.imagePrewarm?.lookahead ??
    adaptiveLookahead(expectedPullMs(lists, images, set.now), rolloutPace([...set.replicas.values()], set.update.metadata.name))
  );
}

/** Only a warm pool is left to serve: no rollout, no pod waiting for a node or to become available. */
const poolOnly = (order: RolloutOrder | undefined, work: NodeWork | undefined): boolean =>
  !order && work?.pool !== undefined && work.unplaced === 0 && !work.settling;

/** A pool with no node to pre-warm says so, rather than that the next pods are not scheduled. */
function emptyPoolCondition(outcome: PrewarmOutcome, pool: Readonly<Record<string, string>> | undefined): PrewarmOutcome {
  if (!pool || !outcome.condition || (outcome.status?.nodesRequested ?? 0) > 0 || outcome.condition.reason !== Reason.prewarmPending) return outcome;
  const selector = Object.entries(pool)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return { ...outcome, condition: { ...outcome.condition, message: `no node matches the warm pool's nodeSelector (${selector})` } };
}

/** The plan while pre-warming has work: a rollout (`order`), a pool or a scale-up (`work`), or both. */
function activePlan(
  app: Stored<App>,
  view: RolloutView,
  work: { order: RolloutOrder | undefined; nodes: NodeWork | undefined; policy: PrewarmPolicy | undefined },
  lists: readonly ClusterStored<ImageList>[],
  nodes: readonly NodeFacts[],
): PrewarmOutcome {
  const { order, policy } = work;
  const update = view.set.update;
  const template = templateOf(update);
  const images = templateImages(template);
  const lookahead = order ? lookaheadOf(app, view, lists, images) : undefined;
  const targets = mergedTargets(order ? targetNodes(order, lookahead) : [], template, work.nodes, nodes);
  // A pool with no rollout or scale-up left keeps its own nodes only: a node that left it is cleared.
  const retain = poolOnly(order, work.nodes) ? new Set(targets) : undefined;
  const outcome = planPrewarm({
    id: prewarmIdentity(app.metadata.namespace, app.metadata.name),
    active: true,
    images,
    pullSecret: firstPullSecret(template, app.metadata.namespace),
    revision: update.metadata.name,
    targets,
    parallelism: app.spec.imagePrewarm?.parallelism,
    lookahead: order && !order.waiting ? lookahead : undefined,
    retain,
    lists,
    now: view.set.now,
    policy,
    waitingSince: order?.waiting ? waitingSince(app.status) : undefined,
  });
  const landed = podsOnWarmNodes([...view.set.replicas.values()], update.metadata.name, images, lists);
  const said = emptyPoolCondition(outcome, poolOnly(order, work.nodes) ? work.nodes?.pool : undefined);
  // Omitted when zero, as Kubernetes status counters are.
  return said.status && landed > 0 ? { ...said, status: { ...said.status, podsOnWarmNodes: landed } } : said;
}

/**
 * Pre-warming for one plan: `NeedsInput` when the ImageLists (or, for a warm pool or a scale-up, the Nodes)
 * must be read first, else the outcome. `view` is undefined when the App is being deleted (everything is
 * cleared).
 */
export function prewarmStep(
  app: Stored<App>,
  view: RolloutView | undefined,
  lists: readonly ClusterStored<ImageList>[] | undefined,
  nodes?: readonly NodeFacts[],
  policy?: PrewarmPolicy,
): NeedsInput | PrewarmOutcome {
  const order = activeOrder(app, view);
  const work = nodeWork(app, view, order);
  if (!order && !work && app.status?.prewarm === undefined) return INERT;
  if (lists === undefined) return { needs: 'imageLists' };
  if (!view || (!order && !work)) {
    const id = prewarmIdentity(app.metadata.namespace, app.metadata.name);
    return planPrewarm({ id, active: false, images: [], revision: '', targets: [], parallelism: app.spec.imagePrewarm?.parallelism, lists });
  }
  if (work && (work.pool || work.unplaced > 0) && nodes === undefined) return { needs: 'nodes' };
  return activePlan(app, view, { order, nodes: work, policy }, lists, nodes ?? []);
}

/** `status` with the outcome's `prewarm` and ImagesPrewarmed condition (both removed when it has none). */
export function withPrewarmStatus(status: AppStatus, outcome: PrewarmOutcome, now: Date, generation: number | undefined): AppStatus {
  const { prewarm: previous, ...rest } = status;
  // An outcome that counts no pods (an App being deleted) keeps the count the status had.
  const landed = outcome.status?.podsOnWarmNodes ?? previous?.podsOnWarmNodes;
  const prewarm = outcome.status ? { ...outcome.status, ...(landed !== undefined ? { podsOnWarmNodes: landed } : {}) } : undefined;
  const conditions = outcome.condition
    ? setCondition(status.conditions, outcome.condition, now, generation)
    : status.conditions?.filter((c) => c.type !== ConditionType.imagesPrewarmed);
  return { ...rest, ...(prewarm ? { prewarm } : {}), ...(conditions ? { conditions } : {}) };
}
