/**
 * Turns the kubelet's desired status into a strategic merge patch for `pods/status`, the way the kubelet's
 * status manager does: conditions merge by type, so conditions written by other owners (readiness gates such
 * as ebb's InPlaceUpdateReady) are never touched; container status lists are replaced; the pod UID rides
 * along as a precondition, so a patch never lands on a pod recreated under the same name.
 */
import type { PodCondition, PodStatus } from '../../../src/kube/types.ts';
import { TRANSIENT_CONDITIONS, type KubeletPodStatus } from './pod-status.ts';

export interface StatusPatch {
  metadata: { uid: string };
  status: Record<string, unknown>;
}

/** The strategic merge patch that makes the pod's status match `desired`. */
export function statusPatch(uid: string, desired: KubeletPodStatus, observed: PodStatus | undefined): StatusPatch {
  const removed = TRANSIENT_CONDITIONS.filter(
    (t) => observed?.conditions?.some((c) => c.type === t) === true && !desired.conditions.some((c) => c.type === t),
  ).map((type) => ({ type, $patch: 'delete' }));
  // Conditions merge by type: a reason or message the new condition lacks must be cleared explicitly.
  const conditions = desired.conditions.map((c) => ({ ...c, reason: c.reason ?? null, message: c.message ?? null }));
  return {
    metadata: { uid },
    status: { ...desired, conditions: [...conditions, ...removed] },
  };
}

/** The fields whose drift (someone else overwrote them) makes the kubelet post its status again. */
export function coreProjection(status: PodStatus | undefined, ownedTypes: readonly string[]): string {
  if (!status) return '';
  const conds = (status.conditions ?? [])
    .filter((c: PodCondition) => ownedTypes.includes(c.type))
    .map((c) => `${c.type}=${c.status}/${c.reason ?? ''}`)
    .sort();
  const containers = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])].map(
    (s) => `${s.name}:${s.containerID ?? ''}:${s.restartCount}:${s.ready}:${Object.keys(s.state).join('')}`,
  );
  return JSON.stringify([status.phase ?? '', status.podIP ?? '', conds, containers]);
}
