/**
 * What an App's plan reads of a pod, folded into one number per pod, so that a pod watch event enqueues the
 * App only when one of those things changed. The kubelet's intermediate status patches (scheduled, sandbox
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
 * and its whole status count then.
 */
import { Annotation } from '../api/keys.ts';
import { fnv1a32 } from '../common/hash.ts';
import type { KubeObject } from '../kube/types.ts';

/** Bits above the 32-bit hash: exact in a double (below 2^53). */
const TERMINATING = 2 ** 32;
const READY = 2 ** 33;

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

/** The fields the in-place steps read of a pod they are updating: its containers and its status, in full. */
function inPlaceDetail(obj: KubeObject): unknown {
  const pod = obj as PodLike;
  return [pod.spec?.containers ?? [], pod.spec?.initContainers ?? [], pod.status ?? {}];
}

/**
 * The digest of `obj` (a pod): a 32-bit hash of what plans read, plus a terminating and a ready bit. A
 * terminating pod is its uid and the terminating bit until it is gone: no plan acts on it but by waiting
 * (it counts as unavailable whatever its readiness), and only the status counts it (replicas, readyReplicas),
 * which the reconcile at its removal brings up to date.
 */
export function podDigest(obj: KubeObject): number {
  const m = obj.metadata ?? {};
  if (m.deletionTimestamp) return fnv1a32(m.uid ?? '') + TERMINATING;
  const pod = obj as PodLike;
  const { ready, since } = readiness(pod);
  const flags = ready ? READY : 0;
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

const terminating = (d: number): boolean => Math.floor(d / TERMINATING) % 2 === 1;
const ready = (d: number): boolean => Math.floor(d / READY) % 2 === 1;

/**
 * Whether a pod event whose digest went from `before` (undefined: a pod not seen so far) to `after` needs a
 * reconcile. Besides an unchanged digest, two transitions are what ebb's own writes look like, and the status
 * written with those writes already counts them (the planner projects its writes into the status): a pod
 * controlled by an App appearing (the App's create; created, not ready) and a pod becoming terminating (the
 * App's delete). What follows them (Ready; the pod gone) is a change again. A pod deleted by someone else
 * is seen by its App when it is gone; until then the plan would only wait on it.
 */
export function podEventNeedsReconcile(type: string, before: number | undefined, after: number, controlledByApp: boolean): boolean {
  if (type === 'DELETED') return true;
  if (before === undefined) return !(type === 'ADDED' && controlledByApp && !terminating(after) && !ready(after));
  if (before === after) return false;
  return !(!terminating(before) && terminating(after));
}
