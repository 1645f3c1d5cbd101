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
import type { ImageList } from '../../../api/image-list.ts';
import type { ClusterStored } from '../../../kube/types.ts';
import { ConditionType, Reason } from '../../../api/keys.ts';
import { prewarmFieldManager, prewarmLabelKey } from '../../../api/prewarm-keys.ts';
import type { ConditionInput } from '../../shared/conditions.ts';
import { formatDuration } from '../../../common/duration.ts';
import type { PullLimit } from '../../shared/pull-budget.ts';
import { waitingFor } from '../../shared/pull-grant.ts';
import { imagesKey, nodeState, type NodeState } from '../../shared/pull-state.ts';
import { answerDueAt, cappedImages, pinsEndAt, timestamp } from './policy.ts';
import { DEFAULT_PREWARM_POLICY, type PrewarmPolicy } from '../model/prewarm-policy.ts';
import type { BudgetUse, PrewarmAction, PrewarmOutcome } from '../model/prewarm-outcome.ts';

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
  /** The plan's time: written as the request time, and the clock of `policy`. Absent: neither (no timeouts). */
  now?: Date | undefined;
  /** The limits (`policy.ts`); absent: the defaults. */
  policy?: PrewarmPolicy | undefined;
  /** When the rollout began to wait (`waitingSince` of `policy.ts`), for the pin limit. */
  waitingSince?: number | undefined;
}

const MESSAGE_NODES = 3;

/** Whether `list` holds this App's entries for exactly the current image set. */
function holdsCurrent(list: ClusterStored<ImageList>, labelKey: string, images: readonly string[], key: string): boolean {
  if (list.metadata.labels?.[labelKey] !== key) return false;
  const listed = new Set((list.spec?.images ?? []).map((e) => e.image));
  return images.every((image) => listed.has(image));
}

const countOf = (states: ReadonlyMap<string, NodeState>, state: NodeState['state']): number => [...states.values()].filter((s) => s.state === state).length;

const nodeList = (nodes: readonly string[]): string =>
  nodes.length <= MESSAGE_NODES ? nodes.join(', ') : `${nodes.slice(0, MESSAGE_NODES).join(', ')} and ${nodes.length - MESSAGE_NODES} more`;

/**
 * Condition ImagesPrewarmed for the requested nodes' states; `waiting` nodes are targets the pull budget has no
 * room for yet; `note` ends the message.
 */
export function prewarmCondition(states: ReadonlyMap<string, NodeState>, revision: string, waiting = 0, note = '', limitedBy?: PullLimit): ConditionInput {
  const type = ConditionType.imagesPrewarmed;
  const named = (state: NodeState['state']): string[] =>
    [...states].flatMap(([n, s]) => (s.state !== state ? [] : s.state === 'failed' || s.state === 'deferred' ? [`${n} (${s.message})`] : [n]));
  const pulling = named('pulling');
  const failed = named('failed');
  const deferred = named('deferred');
  const silent = named('unanswered');
  const pulled = countOf(states, 'pulled');
  const budget = waiting > 0 ? `; ${waiting} more ${waiting === 1 ? 'node waits' : 'nodes wait'} ${waitingFor(limitedBy)}` : '';
  const tail = `${budget}${note}`;
  if (states.size === 0)
    return {
      type,
      status: 'False',
      reason: Reason.prewarmPending,
      message:
        waiting > 0
          ? `no node requested yet for revision ${revision}${tail}`
          : `no node to pre-warm yet for revision ${revision}: the next pods are not scheduled${note}`,
    };
  const head = `${pulled} of ${states.size} requested nodes pulled the images of revision ${revision}`;
  const details = [
    failed.length > 0 ? `; failed on ${nodeList(failed)}` : '',
    deferred.length > 0 ? `; deferred for disk on ${nodeList(deferred)}` : '',
    silent.length > 0 ? `; no answer from the node daemon on ${nodeList(silent)} (its pull slot is given back)` : '',
  ].join('');
  const condition = (reason: string, status: 'True' | 'False', message: string): ConditionInput => ({ type, status, reason, message });
  if (pulling.length > 0) return condition(Reason.imagesPulling, 'False', `${head}; pulling on ${nodeList(pulling)}${details}${tail}`);
  if (failed.length > 0) return condition(Reason.imagePullFailed, 'False', `${head}${details}${tail}`);
  if (deferred.length > 0) return condition(Reason.imagePullDeferred, 'False', `${head}${details}${tail}`);
  if (silent.length > 0) return condition(Reason.prewarmUnanswered, 'False', `${head}${details}${tail}`);
  if (waiting > 0) return condition(Reason.prewarmPending, 'False', `${head}${tail}`);
  return condition(Reason.imagesPulled, 'True', `${head}${note}`);
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

function reported(actions: PrewarmAction[], budget: BudgetUse, waiting: number, limitedBy?: PullLimit): PrewarmOutcome {
  const { states } = budget;
  return {
    actions,
    status: {
      nodesRequested: states.size,
      nodesPulled: countOf(states, 'pulled'),
      nodesFailed: countOf(states, 'failed'),
      ...(budget.lookahead !== undefined ? { lookahead: budget.lookahead } : {}),
    },
    condition: prewarmCondition(states, budget.revision, waiting, budget.note, limitedBy),
    budget,
  };
}

/**
 * The outcome with only the `granted` requests: the others are left for a later reconcile, when the pull
 * budget (or the namespace's share or entries, `limitedBy`) has room, and reported as waiting for it.
 */
export function withinBudget(outcome: PrewarmOutcome, granted: ReadonlySet<string>, limitedBy?: PullLimit): PrewarmOutcome {
  const { budget } = outcome;
  const held = outcome.actions.filter((a) => a.kind === 'requestPrewarm' && !granted.has(a.node)).map((a) => a.node);
  if (!budget || held.length === 0) return outcome;
  const states = new Map(budget.states);
  for (const node of held) states.delete(node);
  const actions = outcome.actions.filter((a) => !held.includes(a.node) || a.kind === 'removePrewarm');
  return { ...reported(actions, { ...budget, states }, held.length, limitedBy), wakeAt: outcome.wakeAt };
}

/**
 * The rollout has waited longer than the pin limit: every entry is removed (image garbage collection may
 * reclaim the images), and the condition says so until the wait ends.
 */
function unpinned(input: PrewarmInput, since: number, policy: PrewarmPolicy): PrewarmOutcome {
  const message = `the rollout has waited since ${timestamp(new Date(since))}, longer than ${formatDuration(policy.pinMaxMs)} (EBB_PREWARM_PIN_MAX): the images of revision ${input.revision} are no longer kept on the nodes, so image garbage collection may reclaim them; pre-warming resumes when the rollout goes on`;
  return { ...clearAll(input), condition: { type: ConditionType.imagesPrewarmed, status: 'False', reason: Reason.prewarmUnpinned, message } };
}

/**
 * Each requested node's state for the current image set, the lists holding an earlier one, and when the first
 * node still silent becomes overdue (the App is planned again then: a silent daemon changes nothing to watch).
 */
function statesOf(input: PrewarmInput, images: readonly string[], key: string, policy: PrewarmPolicy) {
  const now = input.now?.getTime();
  const labelKey = input.id.labelKey;
  const states = new Map<string, NodeState>();
  const stale: ClusterStored<ImageList>[] = [];
  let dueAt: number | undefined;
  for (const list of input.lists) {
    const node = list.metadata.name;
    const due = now === undefined ? undefined : answerDueAt(list, images, labelKey, policy);
    if (!holdsCurrent(list, labelKey, images, key) || !(input.retain?.has(node) ?? true)) stale.push(list);
    else if (now !== undefined && due !== undefined && now >= due) states.set(node, { state: 'unanswered' });
    else {
      states.set(node, nodeState(list, images));
      if (due !== undefined) dueAt = Math.min(dueAt ?? due, due);
    }
  }
  return { states, stale, dueAt };
}

const earliest = (...times: (number | undefined)[]): number | undefined =>
  times.reduce<number | undefined>((min, t) => (t === undefined ? min : Math.min(min ?? t, t)), undefined);

function request(input: PrewarmInput, node: string, images: string[], key: string): PrewarmAction {
  return {
    kind: 'requestPrewarm',
    node,
    fieldManager: input.id.fieldManager,
    label: { key: input.id.labelKey, value: key },
    images,
    ...(input.pullSecret ? { pullSecret: input.pullSecret } : {}),
    ...(input.now ? { requestedAt: timestamp(input.now) } : {}),
  };
}

/** The label value of a request: the image set, and the pull secret (naming another one requests the nodes again). */
const requestKey = (images: readonly string[], secret: PrewarmInput['pullSecret']): string =>
  imagesKey(secret ? [...images, `pull-secret=${secret.namespace}/${secret.name}`] : images);

/** When a node requested now becomes overdue if its daemon stays silent. */
const answerDueOfNew = (now: Date | undefined, policy: PrewarmPolicy): number | undefined =>
  now && policy.answerTimeoutMs > 0 ? now.getTime() + policy.answerTimeoutMs : undefined;

const capNote = (left: number, all: number, policy: PrewarmPolicy): string =>
  `; ${left} of the revision's ${all} images not pre-warmed (at most ${policy.maxImagesPerNode} per node, EBB_PREWARM_MAX_IMAGES_PER_NODE)`;

export function planPrewarm(input: PrewarmInput): PrewarmOutcome {
  if (!input.active || input.images.length === 0) return clearAll(input);
  const policy = input.policy ?? DEFAULT_PREWARM_POLICY;
  const pinsEnd = pinsEndAt(input.waitingSince, policy);
  if (input.now && pinsEnd !== undefined && input.now.getTime() >= pinsEnd) return unpinned(input, pinsEnd - policy.pinMaxMs, policy);
  const { images, left } = cappedImages(input.images, policy.maxImagesPerNode);
  const key = requestKey(images, input.pullSecret);
  const { states, stale, dueAt } = statesOf(input, images, key, policy);
  const pulling = [...states].filter(([, s]) => s.state === 'pulling').map(([node]) => node);
  const slots = input.parallelism === undefined ? Infinity : Math.max(0, input.parallelism - pulling.length);
  const fresh = input.targets.filter((node) => !states.has(node)).slice(0, slots);
  const actions: PrewarmAction[] = fresh.map((node) => request(input, node, images, key));
  // An earlier image set: replaced by the request when the node is requested now, cleared otherwise.
  for (const list of stale) if (!fresh.includes(list.metadata.name)) actions.push(removal(list, input.id));
  const done = input.lists.map((l) => l.metadata.name).filter((node) => !pulling.includes(node));
  for (const node of fresh) states.set(node, { state: 'pulling' });
  const note = left > 0 ? capNote(left, input.images.length, policy) : undefined;
  const outcome = reported(actions, { pulling, done, states, revision: input.revision, lookahead: input.lookahead, note, images: images.length }, 0);
  const wakeAt = earliest(pinsEnd, dueAt, fresh.length > 0 ? answerDueOfNew(input.now, policy) : undefined);
  return wakeAt === undefined ? outcome : { ...outcome, wakeAt };
}
