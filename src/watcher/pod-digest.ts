/**
 * What an App's plan and status read of a pod, folded into one number per pod, so that a pod watch event
 * enqueues the App only when one of those things changed. The kubelet's intermediate status patches (scheduled, sandbox
 * ready, containers created, running but not yet ready), resourceVersion-only updates and managed-fields
 * bookkeeping leave the digest as it was. The watcher keeps the number, never the pod.
 *
 * A plan reads of a pod: its identity (uid), all its labels (revision, identity, lifecycle state and hook
 * handlers, specified-delete, priority) and annotations (in-place state, lifecycle), its finalizers (a
 * lifecycle hook's handlers), its owners (controller; release of a pod that left the selector), whether it is
 * terminating, whether it failed or succeeded, whether it is running and Ready (and since when, for
 * minReadySeconds), whether it is unschedulable (its claims are checked then), and the conditions other than
 * the kubelet's own (the lifecycle-ready condition, readiness gates). A pod being updated in place (it carries
 * the in-place state annotation) is read in full by the in-place steps: its containers' images and resources
 * and its whole status count then. The status counts every pod it owns by the same predicates, terminating
 * ones included (replicas, readyReplicas, availableReplicas), so a terminating pod's number covers the same
 * fields as a live one's.
 */
import { Annotation } from '../api/keys.ts';
import { fnv1a32 } from '../common/hash.ts';
import type { KubeObject } from '../kube/types.ts';

/** Bits above the 32-bit hash: exact in a double (below 2^53). */
const TERMINATING = 2 ** 32;
const READY = 2 ** 33;
/** DisruptionTarget=True: the eviction API, the taint manager, the pod GC or the scheduler's preemption deletes it. */
const DISRUPTED = 2 ** 34;

/** The conditions the kubelet and the scheduler maintain: what plans read of them is readiness and scheduling. */
const SYSTEM_CONDITIONS = new Set(['PodScheduled', 'Initialized', 'ContainersReady', 'Ready', 'PodReadyToStartContainers', 'DisruptionTarget']);

interface PodLike {
  spec?: { containers?: unknown[]; initContainers?: unknown[]; nodeName?: string };
  status?: {
    phase?: string;
    conditions?: { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string }[];
  };
}

function sorted(map: Record<string, string> | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Phase Running and condition Ready=True (the plan's "running and ready"), with the Ready transition time. */
function readiness(pod: PodLike): { ready: boolean; since: string } {
  const cond = pod.status?.conditions?.find((c) => c.type === 'Ready');
  const ready = pod.status?.phase === 'Running' && cond?.status === 'True';
  return { ready, since: ready ? (cond?.lastTransitionTime ?? '') : '' };
}

/** Failed and Succeeded pods are replaced; Pending, Running and Unknown differ to a plan only through readiness. */
function phaseClass(pod: PodLike): string {
  const phase = pod.status?.phase;
  return phase === 'Failed' || phase === 'Succeeded' ? phase : '';
}

/**
 * A pod the scheduler could not place (PodScheduled=False), with the scheduler's reason: a plan creates the
 * missing claims of an unscheduled pod (they may have been deleted after it was created).
 */
function unschedulable(pod: PodLike): string {
  if (pod.spec?.nodeName) return '';
  const cond = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  return cond?.status === 'False' ? `${cond.reason ?? ''}/${cond.message ?? ''}` : '';
}

/** Conditions set by others than the kubelet and the scheduler (the lifecycle-ready condition, readiness gates). */
function otherConditions(pod: PodLike): [string, string, string, string][] {
  return (pod.status?.conditions ?? [])
    .filter((c) => !SYSTEM_CONDITIONS.has(c.type ?? ''))
    .map((c): [string, string, string, string] => [c.type ?? '', c.status ?? '', c.reason ?? '', c.message ?? ''])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Whether the pod carries DisruptionTarget=True (set by whoever deletes it on the cluster's behalf, never by an App). */
function disrupted(pod: PodLike): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True') === true;
}

/** The fields the in-place steps read of a pod they are updating: its containers and its status, in full. */
function inPlaceDetail(obj: KubeObject): unknown {
  const pod = obj as PodLike;
  return [pod.spec?.containers ?? [], pod.spec?.initContainers ?? [], pod.status ?? {}];
}

/**
 * The digest of `obj` (a pod): a 32-bit hash of what plans and the status read, plus a terminating, a ready
 * and a disrupted bit. A terminating pod's hash covers the same fields as a live one's: the status counts it
 * by its readiness and availability until it is gone, and its deletion alone leaves the hash as it was.
 */
export function podDigest(obj: KubeObject): number {
  const m = obj.metadata ?? {};
  const pod = obj as PodLike;
  const { ready, since } = readiness(pod);
  const flags = (ready ? READY : 0) + (m.deletionTimestamp ? TERMINATING : 0) + (disrupted(pod) ? DISRUPTED : 0);
  const annotations = m.annotations ?? {};
  const inPlace = annotations[Annotation.inPlaceUpdateState] !== undefined;
  const hash = fnv1a32(
    JSON.stringify([
      m.uid ?? '',
      sorted(m.labels),
      sorted(annotations),
      [...(m.finalizers ?? [])].sort(),
      (m.ownerReferences ?? []).map((r) => [r.uid ?? '', r.controller === true]),
      phaseClass(pod),
      since,
      unschedulable(pod),
      otherConditions(pod),
      inPlace ? inPlaceDetail(obj) : 0,
    ]),
  );
  return hash + flags;
}

const has = (d: number, bit: number): boolean => Math.floor(d / bit) % 2 === 1;
const terminating = (d: number): boolean => has(d, TERMINATING);
const readyBit = (d: number): boolean => has(d, READY);
/** The digest without the disrupted bit: what plans and the status read (the bit only says who deletes). */
const read = (d: number): number => (has(d, DISRUPTED) ? d - DISRUPTED : d);

/**
 * What a pod event needs: a reconcile now, none, or one unless something else covers it within a short hold:
 * - `await-status`: the pod started terminating and nothing else it is read for changed. That is what an
 *   App's own delete looks like, and the status that App's reconcile writes right after counts the pod as
 *   terminating: when the App's status is written during the hold, nothing is left to do. A delete by
 *   anyone else (a person, the garbage collector) is not followed by such a write, so it reaches a
 *   reconcile when the hold ends. A pod carrying DisruptionTarget (an eviction, a node drain, a taint, the pod
 *   GC, a preemption) was not deleted by an App: a reconcile at once.
 * - `await-removal`: something read of a terminating pod changed (readiness, phase, labels, finalizers...). The
 *   kubelet's last status of a pod without finalizers is followed at once by its removal, whose reconcile
 *   covers both; a pod held by a finalizer or a grace period reaches a reconcile when the hold ends.
 */
export type PodVerdict = 'reconcile' | 'drop' | 'await-status' | 'await-removal';

/**
 * The verdict on a pod event whose digest went from `before` (undefined: a pod not seen so far) to `after`.
 * Dropped: an unchanged digest (a DisruptionTarget condition alone included), and a pod controlled by an App
 * appearing created and not ready (the App's create: the status written with it counts it so).
 */
export function podEventVerdict(type: string, before: number | undefined, after: number, controlledByApp: boolean): PodVerdict {
  if (type === 'DELETED') return 'reconcile';
  if (before === undefined) return type === 'ADDED' && controlledByApp && !terminating(after) && !readyBit(after) ? 'drop' : 'reconcile';
  if (!terminating(before) && terminating(after)) {
    if (has(after, DISRUPTED)) return 'reconcile';
    return read(after) - TERMINATING === read(before) ? 'await-status' : 'reconcile';
  }
  if (read(before) === read(after)) return 'drop';
  return terminating(before) && terminating(after) ? 'await-removal' : 'reconcile';
}
