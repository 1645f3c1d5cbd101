/**
 * `prewarm/` owns image pre-warming: the ImageList writes and status (this file), which nodes to pre-warm
 * (`targets.ts`) and how the writes are performed, best effort (`apply.ts`).
 *
 * Image pre-warming as a pure function. Input: the nodes to pre-warm in update order, the images of the update
 * revision, and the ImageLists that already hold this App's entries (found by the App's label). Output: the
 * ImageLists to apply and to clear, `status.prewarm` and condition ImagesPrewarmed.
 *
 * A node is "requested" once its ImageList lists the current images for this App (the label value names the
 * image set), and "in progress" until its daemon reports each image Pulled or Failed. With `parallelism` set, at
 * most that many nodes are in progress at once: the next node is requested when one finishes; without it, every
 * target is asked for, and the cluster's pull budget (`budget.ts`, applied when the writes are made) decides
 * how many go out now. Entries of an earlier image set
 * are cleared (or replaced when the node is requested again); everything is cleared once pre-warming stops
 * (rollout over, pre-warm disabled, App deleted). Nothing here ever holds the rollout back.
 */
import type { PrewarmStatus } from '../../../api/app-status.ts';
import { ImagePhase, type ImageList } from '../../../api/image-list.ts';
import type { ClusterStored } from '../../../kube/types.ts';
import { ConditionType, prewarmFieldManager, prewarmLabelKey, Reason } from '../../../api/keys.ts';
import type { Action } from '../actions.ts';
import type { ConditionInput } from '../status/conditions.ts';
import { fnv1a32 } from '../../../common/hash.ts';

export type PrewarmAction = Extract<Action, { kind: 'requestPrewarm' | 'removePrewarm' }>;

/** Who writes: the App's field manager and the label its ImageLists carry. */
interface PrewarmIdentity {
  fieldManager: string;
  labelKey: string;
}

export function prewarmIdentity(namespace: string, name: string): PrewarmIdentity {
  return { fieldManager: prewarmFieldManager(namespace, name), labelKey: prewarmLabelKey(namespace, name) };
}

export interface PrewarmInput {
  id: PrewarmIdentity;
  /** Pre-warming goes on: enabled, the App not being deleted, pods left to update. Otherwise everything is cleared. */
  active: boolean;
  /** The update revision's images (containers and init containers), each once. */
  images: readonly string[];
  /** The update revision's first image pull Secret (in the App's namespace), if it names one. */
  pullSecret?: { namespace: string; name: string } | undefined;
  /** The update revision's name, for messages. */
  revision: string;
  /** Nodes to pre-warm now, in update order, each once. */
  targets: readonly string[];
  /** At most this many nodes in progress at once; undefined: only the pull budget bounds them. */
  parallelism: number | undefined;
  /** How many of the next pods the targets cover, for the status; undefined: every pod left to update. */
  lookahead?: number | undefined;
  /**
   * When set, the only nodes whose entries are kept: the others are cleared even when they hold the current
   * images (a warm pool with no rollout left, `nodes.ts`). Unset: entries of the current images stay until
   * pre-warming stops.
   */
  retain?: ReadonlySet<string> | undefined;
  /** The ImageLists carrying `id.labelKey`, as read. */
  lists: readonly ClusterStored<ImageList>[];
}

export type NodeState = { state: 'pulling' } | { state: 'pulled' } | { state: 'failed'; message: string };

/** What the outcome means for the cluster's pull budget, and enough to report it again with fewer requests. */
export interface BudgetUse {
  /** Nodes requested earlier whose pulls are still in progress: they keep their share of the budget. */
  pulling: string[];
  /** Nodes of this App's ImageLists with no pull of the current images in progress: their share is given back. */
  done: string[];
  /** Every requested node's state, the nodes requested now counted as pulling. */
  states: ReadonlyMap<string, NodeState>;
  revision: string;
  lookahead?: number | undefined;
}

export interface PrewarmOutcome {
  actions: PrewarmAction[];
  /** undefined: no entries left (status.prewarm and the condition are removed). */
  status: PrewarmStatus | undefined;
  condition: ConditionInput | undefined;
  budget?: BudgetUse | undefined;
}

const MESSAGE_NODES = 3;
const DETAIL_MAX = 200;

/** The label value naming an image set: 8 hex digits of FNV-1a over the sorted images. */
export function imagesKey(images: readonly string[]): string {
  return fnv1a32([...images].sort().join('\n'))
    .toString(16)
    .padStart(8, '0');
}

/** Whether `list` holds this App's entries for exactly the current image set. */
function holdsCurrent(list: ClusterStored<ImageList>, input: PrewarmInput, key: string): boolean {
  if (list.metadata.labels?.[input.id.labelKey] !== key) return false;
  const listed = new Set((list.spec?.images ?? []).map((e) => e.image));
  return input.images.every((image) => listed.has(image));
}

/** Where the daemon stands on `images` in `list`: pulling until each one is Pulled or Failed. */
export function nodeState(list: ClusterStored<ImageList>, images: readonly string[]): NodeState {
  const phases = new Map((list.status?.images ?? []).map((s) => [s.image, s]));
  let failed: string | undefined;
  for (const image of images) {
    const s = phases.get(image);
    if (s?.phase === ImagePhase.failed) failed ??= `${image}: ${(s.message ?? 'pull failed').slice(0, DETAIL_MAX)}`;
    else if (s?.phase !== ImagePhase.pulled) return { state: 'pulling' };
  }
  return failed === undefined ? { state: 'pulled' } : { state: 'failed', message: failed };
}

const nodeList = (nodes: readonly string[]): string =>
  nodes.length <= MESSAGE_NODES ? nodes.join(', ') : `${nodes.slice(0, MESSAGE_NODES).join(', ')} and ${nodes.length - MESSAGE_NODES} more`;

/**
 * Condition ImagesPrewarmed for the requested nodes' states; `waiting` nodes are targets the pull budget has no
 * room for yet.
 */
export function prewarmCondition(states: ReadonlyMap<string, NodeState>, revision: string, waiting = 0): ConditionInput {
  const type = ConditionType.imagesPrewarmed;
  const pulling = [...states].filter(([, s]) => s.state === 'pulling').map(([n]) => n);
  const failed = [...states].flatMap(([n, s]) => (s.state === 'failed' ? [`${n} (${s.message})`] : []));
  const pulled = states.size - pulling.length - failed.length;
  const budget = waiting > 0 ? `; ${waiting} more ${waiting === 1 ? 'node waits' : 'nodes wait'} for room in the cluster's pre-warm pull budget` : '';
  if (states.size === 0)
    return {
      type,
      status: 'False',
      reason: Reason.prewarmPending,
      message:
        waiting > 0
          ? `no node requested yet for revision ${revision}${budget}`
          : `no node to pre-warm yet for revision ${revision}: the next pods are not scheduled`,
    };
  const head = `${pulled} of ${states.size} requested nodes pulled the images of revision ${revision}`;
  const failures = failed.length > 0 ? `; failed on ${nodeList(failed)}` : '';
  if (pulling.length > 0)
    return { type, status: 'False', reason: Reason.imagesPulling, message: `${head}; pulling on ${nodeList(pulling)}${failures}${budget}` };
  if (failed.length > 0) return { type, status: 'False', reason: Reason.imagePullFailed, message: `${head}${failures}${budget}` };
  if (waiting > 0) return { type, status: 'False', reason: Reason.prewarmPending, message: `${head}${budget}` };
  return { type, status: 'True', reason: Reason.imagesPulled, message: head };
}

function removal(list: ClusterStored<ImageList>, id: PrewarmIdentity): PrewarmAction {
  return { kind: 'removePrewarm', node: list.metadata.name, uid: list.metadata.uid, fieldManager: id.fieldManager };
}

/** Clears every ImageList that holds this App's entries (the App's label). */
export function clearAll(input: Pick<PrewarmInput, 'id' | 'lists'>): PrewarmOutcome {
  const done = input.lists.map((l) => l.metadata.name);
  const budget: BudgetUse = { pulling: [], done, states: new Map(), revision: '' };
  return { actions: input.lists.map((l) => removal(l, input.id)), status: undefined, condition: undefined, budget };
}

const countOf = (states: ReadonlyMap<string, NodeState>, state: NodeState['state']): number => [...states.values()].filter((s) => s.state === state).length;

function reported(actions: PrewarmAction[], budget: BudgetUse, waiting: number): PrewarmOutcome {
  const { states } = budget;
  return {
    actions,
    status: {
      nodesRequested: states.size,
      nodesPulled: countOf(states, 'pulled'),
      nodesFailed: countOf(states, 'failed'),
      ...(budget.lookahead !== undefined ? { lookahead: budget.lookahead } : {}),
    },
    condition: prewarmCondition(states, budget.revision, waiting),
    budget,
  };
}

/**
 * The outcome with only the `granted` requests: the others are left for a later reconcile, when the pull
 * budget has room, and reported as waiting for it.
 */
export function withinBudget(outcome: PrewarmOutcome, granted: ReadonlySet<string>): PrewarmOutcome {
  const { budget } = outcome;
  const deferred = outcome.actions.filter((a) => a.kind === 'requestPrewarm' && !granted.has(a.node)).map((a) => a.node);
  if (!budget || deferred.length === 0) return outcome;
  const states = new Map(budget.states);
  for (const node of deferred) states.delete(node);
  const actions = outcome.actions.filter((a) => !deferred.includes(a.node) || a.kind === 'removePrewarm');
  return reported(actions, { ...budget, states }, deferred.length);
}

export function planPrewarm(input: PrewarmInput): PrewarmOutcome {
  if (!input.active || input.images.length === 0) return clearAll(input);
  // The pull secret is part of what is requested: naming another one requests the nodes again.
  const key = imagesKey(input.pullSecret ? [...input.images, `pull-secret=${input.pullSecret.namespace}/${input.pullSecret.name}`] : input.images);
  const states = new Map<string, NodeState>();
  const stale: ClusterStored<ImageList>[] = [];
  for (const list of input.lists) {
    const node = list.metadata.name;
    if (holdsCurrent(list, input, key) && (input.retain?.has(node) ?? true)) states.set(node, nodeState(list, input.images));
    else stale.push(list);
  }
  const pulling = [...states].filter(([, s]) => s.state === 'pulling').map(([node]) => node);
  const slots = input.parallelism === undefined ? Infinity : Math.max(0, input.parallelism - pulling.length);
  const fresh = input.targets.filter((node) => !states.has(node)).slice(0, slots);
  const images = [...input.images].sort();
  const actions: PrewarmAction[] = fresh.map((node) => ({
    kind: 'requestPrewarm',
    node,
    fieldManager: input.id.fieldManager,
    label: { key: input.id.labelKey, value: key },
    images,
    ...(input.pullSecret ? { pullSecret: input.pullSecret } : {}),
  }));
  // An earlier image set: replaced by the request when the node is requested now, cleared otherwise.
  for (const list of stale) if (!fresh.includes(list.metadata.name)) actions.push(removal(list, input.id));
  const done = input.lists.map((l) => l.metadata.name).filter((node) => !pulling.includes(node));
  for (const node of fresh) states.set(node, { state: 'pulling' });
  return reported(actions, { pulling, done, states, revision: input.revision, lookahead: input.lookahead }, 0);
}
