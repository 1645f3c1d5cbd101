/**
 * An ImagePullJob as a pure function. Input: the job, the nodes (names and labels), the ImageLists that hold
 * the job's entries (found by its label) and the time. Output: the ImageLists to request and to clear, the
 * status, the Events, whether to delete the job (ttlSecondsAfterFinished) and when to come back.
 *
 * A node is selected when its labels carry every `nodeSelector` entry and the job's `tolerations` tolerate its
 * NoSchedule and NoExecute taints (as kube-scheduler keeps a pod off it; a cordon is no bar: a drained node
 * comes back); the others the selector picks are counted in `status.untolerated`. A selected node is "requested" once its
 * ImageList holds the job's entries (the label value names the image set), "active" until its daemon reports
 * each image Pulled or Failed, then succeeded or failed. At most `parallelism` nodes are active at once.
 * Entries on a node that is gone or no longer selected are cleared. completionPolicy Always: once every
 * selected node is done, the job is Complete and its entries are cleared; Never: it never completes and
 * requests every node that joins. activeDeadlineSeconds fails a job that is not finished by then (entries
 * cleared). A finished job's status is kept as it was (the ImageLists that told it are cleared).
 */
import { matchesLabels } from '../../kube/labels.ts';
import type { ImageList } from '../../api/image-list.ts';
import { CompletionPolicy, type ImagePullJob, type ImagePullJobStatus } from '../../api/image-pull-job.ts';
import { isPullJobFinished, PullJobCondition, PullJobEventReason, PullJobReason } from '../../api/pull-job-keys.ts';
import type { ClusterStored, Stored } from '../../kube/types.ts';
import type { PullLimit } from '../shared/pull-budget.ts';
import { untoleratedTaint, type Taint } from '../../kube/tolerations.ts';
import { applyGrant, refusedAny, retryAfterMs, type Limited } from '../shared/pull-grant.ts';
import { imagesKey, nodeState, type NodeState } from '../shared/pull-state.ts';
import { rfc3339, setCondition, type ConditionInput } from '../shared/conditions.ts';
import { completion, failedNodes, failureEvents, progressCondition, type Observed, type PullJobEvent } from './report.ts';
import type { Wait } from '../types.ts';

export interface PullJobIdentity {
  fieldManager: string;
  labelKey: string;
  /**
   * Whether the watcher maps ImageList events to this job (it reads the job from the field manager). False
   * for a hashed manager (a very long namespace and name): the job polls while nodes pull instead.
   */
  watched?: boolean | undefined;
}

export interface NodeInfo {
  name: string;
  labels: Readonly<Record<string, string>>;
  /** The node's taints; absent: none. */
  taints?: readonly Taint[] | undefined;
}

export type PullJobAction =
  | {
      kind: 'request';
      node: string;
      label: { key: string; value: string };
      images: string[];
      pullSecret?: { namespace: string; name: string } | undefined;
    }
  | { kind: 'clear'; node: string; uid: string };

export interface PullJobInput {
  job: Stored<ImagePullJob>;
  id: PullJobIdentity;
  nodes: readonly NodeInfo[];
  /** The ImageLists carrying `id.labelKey`, as read. */
  lists: readonly ClusterStored<ImageList>[];
  now: Date;
  /**
   * What the pull budget granted of the nodes a first plan wanted (`PullJobPlan.budget`): only those are
   * requested, the others wait, said in the condition. Absent: every wanted node.
   */
  grant?: { granted: ReadonlySet<string>; limitedBy?: PullLimit | undefined } | undefined;
}

/** What a plan means for the pull budget (`budget.ts`): the job's pulls, the nodes it keeps and those it wants. */
export interface PullJobBudgetUse {
  pulling: string[];
  done: string[];
  kept: string[];
  want: string[];
  entriesPerNode: number;
}

export interface PullJobPlan {
  actions: PullJobAction[];
  /** The status to write; undefined: unchanged. */
  status: ImagePullJobStatus | undefined;
  events: PullJobEvent[];
  /** ttlSecondsAfterFinished has passed: delete the job. */
  deleteJob: boolean;
  wait?: Wait | undefined;
  budget?: PullJobBudgetUse | undefined;
}

export const DEADLINE_WAIT = 'pulljob-deadline';
export const TTL_WAIT = 'pulljob-ttl';
export const PROGRESS_WAIT = 'pulljob-progress';
/** Nodes the pull budget (or the namespace's share or entries) left out are asked for again this often. */
export const BUDGET_WAIT = 'pulljob-budget';
export { ENTRIES_POLL_MS } from '../shared/pull-grant.ts';
/** How often a job whose ImageList events do not reach it reads its nodes' progress while they pull. */
export const PROGRESS_POLL_MS = 15_000;

/** Whether the job's selector picks `node`: its labels carry every selector entry (an empty selector picks every node). */
export function selects(job: Stored<ImagePullJob>, node: NodeInfo): boolean {
  return matchesLabels(node.labels, job.spec.nodeSelector);
}

/** The first NoSchedule or NoExecute taint of `node` the job does not tolerate, or undefined. */
export function untolerated(job: Stored<ImagePullJob>, node: NodeInfo): Taint | undefined {
  return untoleratedTaint(job.spec.tolerations ?? [], { taints: node.taints ?? [] }, false);
}

/** The job's first pull secret, in its own namespace: an ImageList entry names one. */
export function jobPullSecret(job: Stored<ImagePullJob>): { namespace: string; name: string } | undefined {
  const first = job.spec.pullSecrets?.[0];
  return first ? { namespace: job.metadata.namespace, name: first.name } : undefined;
}

/** The label value naming what a node was asked for: the image set and the pull secret. */
export function requestKey(job: Stored<ImagePullJob>): string {
  const secret = jobPullSecret(job);
  return imagesKey(secret ? [...job.spec.images, `pull-secret=${secret.namespace}/${secret.name}`] : job.spec.images);
}

const clearAll = (lists: readonly ClusterStored<ImageList>[]): PullJobAction[] =>
  lists.map((l) => ({ kind: 'clear', node: l.metadata.name, uid: l.metadata.uid }));

/** What to do for a job that no longer exists (or is being deleted): clear every ImageList that holds its entries. */
export function planGone(lists: readonly ClusterStored<ImageList>[]): PullJobAction[] {
  return clearAll(lists);
}

const secondsAfter = (time: string | undefined, seconds: number): number | undefined => (time ? Date.parse(time) + seconds * 1000 : undefined);

/** A finished job: its entries cleared, then deleted once ttlSecondsAfterFinished has passed. */
function planFinished(input: PullJobInput, status: ImagePullJobStatus, events: PullJobEvent[]): PullJobPlan {
  const ttl = input.job.spec.ttlSecondsAfterFinished;
  const expiresAt = ttl === undefined ? undefined : secondsAfter(status.completionTime, ttl);
  const changed = status !== input.job.status;
  const done = input.lists.map((l) => l.metadata.name);
  const budget = { pulling: [], done, kept: [], want: [], entriesPerNode: 0 };
  const base = { actions: clearAll(input.lists), status: changed ? status : undefined, events, budget };
  if (expiresAt === undefined) return { ...base, deleteJob: false };
  const left = expiresAt - input.now.getTime();
  if (left <= 0) {
    const event = { type: 'Normal' as const, reason: PullJobEventReason.deleting, message: `deleting the job: finished ${ttl}s ago (ttlSecondsAfterFinished)` };
    return { ...base, events: [...events, event], deleteJob: true };
  }
  return { ...base, deleteJob: false, wait: { reason: TTL_WAIT, afterMs: left } };
}

function finish(input: PullJobInput, status: ImagePullJobStatus, c: ConditionInput, events: PullJobEvent[]): PullJobPlan {
  const conditions = setCondition(status.conditions, c, input.now, input.job.metadata.generation);
  const done = { ...status, active: 0, completionTime: rfc3339(input.now), conditions };
  return planFinished(input, done, events);
}

interface Counted {
  states: Map<string, NodeState>;
  stale: ClusterStored<ImageList>[];
}

/** The requested nodes' states (selected nodes whose ImageList holds the current request), and the rest to clear. */
function countNodes(input: PullJobInput, selected: ReadonlySet<string>, key: string): Counted {
  const states = new Map<string, NodeState>();
  const stale: ClusterStored<ImageList>[] = [];
  for (const list of input.lists) {
    const node = list.metadata.name;
    const listed = new Set((list.spec?.images ?? []).map((e) => e.image));
    const current = list.metadata.labels?.[input.id.labelKey] === key && input.job.spec.images.every((i) => listed.has(i));
    if (current && selected.has(node)) states.set(node, nodeState(list, input.job.spec.images));
    else stale.push(list);
  }
  return { states, stale };
}

function observe(input: PullJobInput): Observed {
  const { job, now } = input;
  const before = job.status;
  const startTime = before?.startTime ?? rfc3339(now);
  const picked = input.nodes.filter((n) => selects(job, n));
  const selected = picked
    .filter((n) => untolerated(job, n) === undefined)
    .map((n) => n.name)
    .sort();
  const { states, stale } = countNodes(input, new Set(selected), requestKey(job));
  const fails = failedNodes(states);
  const counts = (s: NodeState['state']): number => [...states.values()].filter((v) => v.state === s).length;
  const base: ImagePullJobStatus = {
    ...(before ?? {}),
    observedGeneration: job.metadata.generation,
    startTime,
    desired: selected.length,
    untolerated: picked.length - selected.length,
    succeeded: counts('pulled'),
    failed: counts('failed'),
    failedNodes: fails,
  };
  const deadlineAt = job.spec.activeDeadlineSeconds === undefined ? undefined : secondsAfter(startTime, job.spec.activeDeadlineSeconds);
  return { selected, states, stale, fails, base, deadlineAt };
}

/** The nodes to request now: the next `parallelism` allows, of those the ones the budget granted. */
function nodesToRequest(input: PullJobInput, o: Observed, pulling: readonly string[]): { wanted: string[]; fresh: string[]; limited: Limited | undefined } {
  const { job } = input;
  const slots = job.spec.parallelism === undefined ? Infinity : Math.max(0, job.spec.parallelism - pulling.length);
  const wanted = o.selected.filter((n) => !o.states.has(n)).slice(0, slots);
  return { wanted, ...applyGrant(wanted, input.grant) };
}

export function planPullJob(input: PullJobInput): PullJobPlan {
  const { job, now } = input;
  const before = job.status;
  if (isPullJobFinished(before)) return planFinished(input, before ?? {}, []);
  const o = observe(input);
  const events: PullJobEvent[] = [];
  if (!before?.startTime) events.push({ type: 'Normal', reason: PullJobEventReason.started, message: `pulling ${job.spec.images.length} image(s)` });
  events.push(...failureEvents(before, o.fails));
  if (o.deadlineAt !== undefined && now.getTime() >= o.deadlineAt) {
    const message = `activeDeadlineSeconds (${job.spec.activeDeadlineSeconds}s) passed: ${o.base.succeeded} of ${o.selected.length} nodes pulled the images`;
    events.push({ type: 'Warning', reason: PullJobEventReason.deadlineExceeded, message });
    return finish(input, o.base, { type: PullJobCondition.failed, status: 'True', reason: PullJobReason.deadlineExceeded, message }, events);
  }
  const pulling = [...o.states].filter(([, s]) => s.state === 'pulling').map(([n]) => n);
  // A node whose daemon deferred for disk is not done (it pulls once there is room) but holds no parallelism slot.
  const deferred = [...o.states.values()].filter((s) => s.state === 'deferred').length;
  const { wanted, fresh, limited } = nodesToRequest(input, o, pulling);
  const waiting = o.selected.length - o.states.size - fresh.length;
  const never = job.spec.completionPolicy === CompletionPolicy.never;
  if (!never && pulling.length === 0 && deferred === 0 && fresh.length === 0 && waiting === 0) {
    const { failed, ...c } = completion(o);
    events.push({ type: failed ? 'Warning' : 'Normal', reason: PullJobEventReason.completed, message: c.message });
    return finish(input, o.base, c, events);
  }
  const label = { key: input.id.labelKey, value: requestKey(job) };
  const images = [...job.spec.images].sort();
  const pullSecret = jobPullSecret(job);
  const actions: PullJobAction[] = fresh.map((node) => ({ kind: 'request', node, label, images, pullSecret }));
  actions.push(...clearAll(o.stale.filter((l) => !fresh.includes(l.metadata.name))));
  const active = pulling.length + deferred + fresh.length;
  const c = progressCondition(o, { active, waiting, deferred }, never, limited);
  const status = { ...o.base, active, conditions: setCondition(before?.conditions, c, now, job.metadata.generation) };
  const done = input.lists.map((l) => l.metadata.name).filter((n) => !pulling.includes(n) && !fresh.includes(n));
  const budget = { pulling, done, kept: [...o.states.keys()], want: wanted, entriesPerNode: job.spec.images.length };
  return { actions, status, events, deleteJob: false, wait: nextWait(input, o, active, limited), budget };
}

/** When to come back while the job runs: at its deadline, and every PROGRESS_POLL_MS while nodes pull unwatched or wait for the budget. */
function nextWait(input: PullJobInput, o: Observed, active: number, limited: Limited | undefined): Wait | undefined {
  const deadline = o.deadlineAt === undefined ? undefined : { reason: DEADLINE_WAIT, afterMs: Math.max(0, o.deadlineAt - input.now.getTime()) };
  const poll = refusedAny(limited)
    ? { reason: BUDGET_WAIT, afterMs: retryAfterMs(limited, PROGRESS_POLL_MS) }
    : input.id.watched === false && active > 0
      ? { reason: PROGRESS_WAIT, afterMs: PROGRESS_POLL_MS }
      : undefined;
  if (deadline && poll) return deadline.afterMs <= poll.afterMs ? deadline : poll;
  return deadline ?? poll;
}
