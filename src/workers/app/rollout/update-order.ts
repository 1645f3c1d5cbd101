/**
 * Priority updates (`rollingUpdate.unorderedUpdate.priorityStrategy`), pure. Without a priority strategy the
 * update order is ordinals from the highest down to the partition; with one, the partition counts pods
 * (the replica ordinals at or above it: that many may run the update revision) and which pods is decided by priority:
 *
 * 1. pods already committed to the update revision (at it, being updated in place to it, or terminating: they
 *    come back at it), highest ordinal first;
 * 2. missing ordinals (a pod deleted for its update is recreated at the update revision);
 * 3. outdated pods by priority: the sum of matching weights (weightPriority), or the first ordered key whose
 *    label value ends in an integer, by key precedence then highest integer (orderPriority; pods with none go
 *    last). Ties go to the highest ordinal.
 *
 * The first `limit` ordinals of that list may run the update revision; the rest keep (and are created at) the
 * current revision.
 */
import type { ConditionInput } from '../../shared/conditions.ts';
import type { EventSpec } from '../model/actions.ts';
import type { ControllerRevision, Named, Pod } from '../../../kube/types.ts';
import type { PodSet } from '../pods/pod-set.ts';
import type { PriorityStrategy } from '../../../api/priority.ts';
import { ConditionType, EventReason, Reason } from '../../../api/keys.ts';
import { readState } from '../../inplace/index.ts';
import { getPodRevision, isRunningAndAvailable, isTerminating } from '../pods/predicates.ts';
import { selectorIsEmpty, selectorMatches } from '../pods/selector.ts';
import { podIsUpdatingInPlace } from '../../inplace/index.ts';

type SetView = Pick<PodSet, 'app' | 'rollout' | 'start' | 'end' | 'ordinals' | 'update'> & { replicas: ReadonlyMap<number, Pod> };

/** How many replica ordinals are at or above `floor` (reserved ordinals are not replicas). */
function countFrom(set: Pick<PodSet, 'ordinals'>, floor: number): number {
  let n = 0;
  for (const o of set.ordinals) if (o >= floor) n++;
  return n;
}

/** The integer a label value ends with ("5" → 5, "db-10" → 10); undefined when it ends in no digit. */
export function trailingInteger(value: string): number | undefined {
  const m = /([0-9]+)$/.exec(value);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

type Labels = Readonly<Record<string, string>>;

function weightOf(strategy: PriorityStrategy, labels: Labels): number {
  let sum = 0;
  for (const term of strategy.weightPriority ?? []) {
    if (selectorIsEmpty(term.matchSelector) || selectorMatches(term.matchSelector, labels)) sum += term.weight;
  }
  return sum;
}

/** Key precedence (lower first) and value (higher first) of the first ordered key with an integer value. */
function orderRankOf(strategy: PriorityStrategy, labels: Labels): { level: number; value: number } | undefined {
  const terms = strategy.orderPriority ?? [];
  for (let level = 0; level < terms.length; level++) {
    const key = terms[level]?.orderedKey;
    const raw = key === undefined ? undefined : labels[key];
    const value = raw === undefined ? undefined : trailingInteger(raw);
    if (value !== undefined) return { level, value };
  }
  return undefined;
}

interface Candidate {
  ordinal: number;
  labels: Labels;
}

/** Negative when `a` is updated before `b`. */
export function comparePriority(strategy: PriorityStrategy, a: Candidate, b: Candidate): number {
  if (strategy.weightPriority !== undefined) {
    const d = weightOf(strategy, b.labels) - weightOf(strategy, a.labels);
    if (d !== 0) return d;
  } else if (strategy.orderPriority !== undefined) {
    const ra = orderRankOf(strategy, a.labels);
    const rb = orderRankOf(strategy, b.labels);
    if (ra && !rb) return -1;
    if (!ra && rb) return 1;
    if (ra && rb && ra.level !== rb.level) return ra.level - rb.level;
    if (ra && rb && ra.value !== rb.value) return rb.value - ra.value;
  }
  return b.ordinal - a.ordinal;
}

/** At the update revision, moving to it in place, or terminating (it is recreated at the revision it may run). */
function committedToUpdate(pod: Pod, update: string): boolean {
  return isTerminating(pod) || getPodRevision(pod) === update || readState(pod)?.revision === update;
}

interface PriorityView {
  /** Ordinals that may run the update revision. */
  eligible: ReadonlySet<number>;
  /** Eligible live pods not committed to the update revision, in update order. */
  outdated: readonly number[];
}

const cache = new WeakMap<object, Map<number, PriorityView>>();

function computeView(set: SetView, strategy: PriorityStrategy, floor: number): PriorityView {
  const update = set.update.metadata.name;
  const committed: number[] = [];
  const missing: number[] = [];
  const waiting: Candidate[] = [];
  for (const ordinal of [...set.ordinals].reverse()) {
    const pod = set.replicas.get(ordinal);
    if (!pod) missing.push(ordinal);
    else if (committedToUpdate(pod, update)) committed.push(ordinal);
    else waiting.push({ ordinal, labels: pod.metadata.labels ?? {} });
  }
  waiting.sort((a, b) => comparePriority(strategy, a, b));
  const limit = countFrom(set, floor);
  const order = [...committed, ...missing, ...waiting.map((c) => c.ordinal)].slice(0, limit);
  const eligible = new Set(order);
  return { eligible, outdated: waiting.map((c) => c.ordinal).filter((o) => eligible.has(o)) };
}

/** The priority view of `set` with `floor` as partition (cached per set object). */
export function priorityView(set: SetView, strategy: PriorityStrategy, floor: number): PriorityView {
  let byFloor = cache.get(set);
  if (!byFloor) {
    byFloor = new Map();
    cache.set(set, byFloor);
  }
  let view = byFloor.get(floor);
  if (!view) {
    view = computeView(set, strategy, floor);
    byFloor.set(floor, view);
  }
  return view;
}

/** Whether the pod at `ordinal` may run (or be created at) the update revision under the partition in force. */
export function mayRunUpdate(set: SetView & Pick<PodSet, 'partition'>, ordinal: number, floor: number = set.partition): boolean {
  const strategy = set.rollout.priorityStrategy;
  if (!strategy) return ordinal >= floor;
  return priorityView(set, strategy, floor).eligible.has(ordinal);
}

/** Live pods at the update revision, available, not being updated in place. */
export function updatedAvailable(set: SetView, minReadySeconds: number, now: Date, from: number = set.start): number {
  let n = 0;
  const update = set.update.metadata.name;
  for (const ordinal of set.ordinals) {
    if (ordinal < from) continue;
    const pod = set.replicas.get(ordinal);
    if (!pod || isTerminating(pod) || podIsUpdatingInPlace(pod) || getPodRevision(pod) !== update) continue;
    if (isRunningAndAvailable(pod, minReadySeconds, now)) n++;
  }
  return n;
}

/** Canary with priority: a step of `target` pods is reached once that many (within the partition) are updated and available. */
export function priorityReached(set: SetView, minReadySeconds: number, now: Date, specPartition: number): (target: number) => boolean {
  const have = updatedAvailable(set, minReadySeconds, now);
  return (target) => have >= Math.min(target, countFrom(set, specPartition));
}

interface IgnoredLabel {
  pod: string;
  key: string;
  value: string;
}

/** Pods still to update carrying an ordered key whose value ends in no digit (so that key does not order them). */
function ignoredPriorityLabels(set: SetView): IgnoredLabel[] {
  const strategy = set.rollout.priorityStrategy;
  const keys = strategy?.orderPriority?.map((t) => t.orderedKey) ?? [];
  if (keys.length === 0) return [];
  const update = set.update.metadata.name;
  const out: IgnoredLabel[] = [];
  for (const ordinal of set.ordinals) {
    const pod = set.replicas.get(ordinal);
    if (!pod || committedToUpdate(pod, update)) continue;
    for (const key of keys) {
      const value = pod.metadata.labels?.[key];
      if (value !== undefined && trailingInteger(value) === undefined) out.push({ pod: pod.metadata.name ?? `ordinal ${ordinal}`, key, value });
    }
  }
  return out;
}

const SHOWN = 5;

/**
 * Condition PriorityLabelIgnored (True while some pod still to update has an ignored ordered-key value; False
 * once none has, when it was True) and a Warning Event when it turns True.
 */
export function priorityReport(
  set: SetView,
  previous: { status?: string | undefined } | undefined,
): { condition: ConditionInput | undefined; event: EventSpec | undefined } {
  const ignored = ignoredPriorityLabels(set);
  if (ignored.length === 0) {
    if (previous?.status !== 'True') return { condition: undefined, event: undefined };
    const message = 'every ordered-key label of the pods still to update ends in an integer';
    return { condition: { type: ConditionType.priorityLabelIgnored, status: 'False', reason: Reason.priorityLabelsNumeric, message }, event: undefined };
  }
  const listed = ignored
    .slice(0, SHOWN)
    .map((i) => `${i.pod} (${i.key}=${JSON.stringify(i.value)})`)
    .join(', ');
  const more = ignored.length > SHOWN ? ` and ${ignored.length - SHOWN} more` : '';
  const message = `ordered-key values that end in no integer are ignored (those pods are ordered by the next key, else updated last): ${listed}${more}`;
  const condition: ConditionInput = { type: ConditionType.priorityLabelIgnored, status: 'True', reason: Reason.nonNumericPriority, message };
  const event: EventSpec | undefined =
    previous?.status === 'True' ? undefined : { type: 'Warning', reason: EventReason.priorityLabelIgnored, action: 'Update', message };
  return { condition, event };
}

/** The revision a new pod at `ordinal` is created from (upstream newVersionedStatefulSetPod). */
export function revisionForOrdinal(set: PodSet, ordinal: number): Named<ControllerRevision> {
  return mayRunUpdate(set, ordinal) ? set.update : set.current;
}
