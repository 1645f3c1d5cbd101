/**
 * Predicates over pods, named like the upstream StatefulSet controller's (stateful_set_utils.go): ordinal,
 * revision, lifecycle phase, readiness and availability, identity.
 */
import type { App } from '../../../api/app.ts';
import { MAX_ORDINAL } from '../../../api/app-rules.ts';
import { Label, LIFECYCLE_STATE_LABEL, LifecycleState } from '../../../api/keys.ts';
import { podIsUpdatingInPlace } from '../../inplace/index.ts';
import type { ObjectMeta, OwnerReference, Pod, PodCondition, Stored } from '../../../kube/types.ts';
import { PodPhase } from '../../../kube/types.ts';

const ORDINAL_SUFFIX = /^(.*)-(0|[1-9][0-9]{0,9})$/;

/** The ordinal of `podName` when it is `<appName>-<n>`, otherwise -1 (such pods are ignored, as upstream). */
export function getOrdinal(appName: string, podName: string | undefined): number {
  const m = ORDINAL_SUFFIX.exec(podName ?? '');
  if (!m || m[1] !== appName) return -1;
  const n = Number(m[2]);
  return Number.isSafeInteger(n) && n <= MAX_ORDINAL ? n : -1;
}

export function podName(appName: string, ordinal: number): string {
  return `${appName}-${ordinal}`;
}

/** The ControllerRevision name a pod was created from (its revision label). */
export function getPodRevision(pod: Pod): string | undefined {
  return pod.metadata.labels?.[Label.revision];
}

export const isFailed = (pod: Pod): boolean => pod.status?.phase === PodPhase.failed;
export const isSucceeded = (pod: Pod): boolean => pod.status?.phase === PodPhase.succeeded;
export const isTerminating = (pod: Pod): boolean => pod.metadata.deletionTimestamp !== undefined;
export const isPending = (pod: Pod): boolean => (pod.status?.phase ?? PodPhase.pending) === PodPhase.pending;
/** Terminating, Failed or Succeeded: a pod past any update step or lifecycle hold (it is replaced, not moved). */
export const isSettledPhase = (pod: Pod): boolean => isTerminating(pod) || isFailed(pod) || isSucceeded(pod);

export function readyCondition(pod: Pod): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Phase Running and condition Ready=True. */
export function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === PodPhase.running && readyCondition(pod)?.status === 'True';
}

/**
 * When a running and ready pod is (or becomes) available: the Ready transition plus minReadySeconds.
 * Undefined when the pod is not running and ready.
 */
export function availableAtMs(pod: Pod, minReadySeconds: number): number | undefined {
  if (!isRunningAndReady(pod)) return undefined;
  if (minReadySeconds <= 0) return Number.NEGATIVE_INFINITY;
  const since = Date.parse(readyCondition(pod)?.lastTransitionTime ?? '');
  // A Ready condition without a parsable transition time counts as ready since forever (kubelets always set it).
  return Number.isNaN(since) ? Number.NEGATIVE_INFINITY : since + minReadySeconds * 1000;
}

/**
 * Running, ready, ready for at least minReadySeconds at `now`, not being updated in place (such a pod is
 * about to restart containers, or does: it counts as unavailable like a pod being recreated), and in no
 * lifecycle state other than Normal (`spec.lifecycle`: out of service, or about to be).
 */
export function isRunningAndAvailable(pod: Pod, minReadySeconds: number, now: Date): boolean {
  if (podIsUpdatingInPlace(pod) || lifecycleHolds(pod)) return false;
  const at = availableAtMs(pod, minReadySeconds);
  return at !== undefined && at <= now.getTime();
}

/** Counts against maxUnavailable: missing, terminating, or not available (being updated in place included). */
export function isUnavailable(pod: Pod | undefined, minReadySeconds: number, now: Date): boolean {
  return pod === undefined || isTerminating(pod) || !isRunningAndAvailable(pod, minReadySeconds, now);
}

export function controllerRef(meta: ObjectMeta): OwnerReference | undefined {
  return meta.ownerReferences?.find((r) => r.controller === true);
}

export function isControlledBy(meta: ObjectMeta, ownerUid: string | undefined): boolean {
  return ownerUid !== undefined && controllerRef(meta)?.uid === ownerUid;
}

/** The identity labels a pod of `app` at `ordinal` carries (upstream identityMatches, label part). */
export function identityLabels(appName: string, ordinal: number): Record<string, string> {
  const name = podName(appName, ordinal);
  return { [Label.app]: appName, [Label.podName]: name, [Label.podIndex]: String(ordinal) };
}

/** Whether the pod has its identity: name, namespace and identity labels for its ordinal. */
export function identityMatches(app: Stored<App>, pod: Pod, ordinal: number): boolean {
  const name = app.metadata.name;
  if (pod.metadata.name !== podName(name, ordinal) || pod.metadata.namespace !== app.metadata.namespace) return false;
  const labels = pod.metadata.labels ?? {};
  return Object.entries(identityLabels(name, ordinal)).every(([k, v]) => labels[k] === v);
}

/** The lifecycle state a pod's label says (`lifecycle/` moves pods between states). */
export function lifecycleState(pod: Pod): string | undefined {
  return pod.metadata.labels?.[LIFECYCLE_STATE_LABEL];
}

/** A pod in a lifecycle state other than Normal is out of service (or about to be): it is not available. */
export function lifecycleHolds(pod: Pod): boolean {
  const state = lifecycleState(pod);
  return state !== undefined && state !== LifecycleState.normal;
}
