/**
 * The pod readiness gate `InPlaceUpdateReady`: present on every pod created under a policy other than ReCreate,
 * True except while an in-place update runs, so the pod leaves Service endpoints before its containers restart.
 */
import { READINESS_GATE_IN_PLACE_UPDATE_READY, Reason } from '../../api/keys.ts';
import { hasStateAnnotation } from './state.ts';
import type { Pod, PodCondition } from '../../kube/types.ts';

export const IN_PLACE_GATE = READINESS_GATE_IN_PLACE_UPDATE_READY;

/** metav1.Time on the wire: RFC 3339 with second precision. */
export function rfc3339(now: Date): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

export function gateCondition(pod: Pod): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === IN_PLACE_GATE);
}

export function hasInPlaceGate(pod: Pod): boolean {
  return (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === IN_PLACE_GATE);
}

/** The gate condition to write; lastTransitionTime moves only when the status changes. */
export function gateConditionFor(pod: Pod, status: 'True' | 'False', reason: string, message: string, now: Date): PodCondition {
  const previous = gateCondition(pod);
  const since = previous?.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : rfc3339(now);
  return { type: IN_PLACE_GATE, status, reason, message, lastTransitionTime: since };
}

/** True for a pod that has the gate and no update in progress but whose condition is not True yet (a new pod). */
export function needsGateReady(pod: Pod): boolean {
  return hasInPlaceGate(pod) && !hasStateAnnotation(pod) && gateCondition(pod)?.status !== 'True' && pod.metadata.deletionTimestamp === undefined;
}

/** The condition `markGateReady` writes on a new pod. */
export function createdGateCondition(pod: Pod, now: Date): PodCondition {
  return gateConditionFor(pod, 'True', Reason.podCreated, 'pod created; no in-place update in progress', now);
}

interface TemplateWithGates {
  spec: { readinessGates?: readonly { conditionType: string }[] } & Record<string, unknown>;
}

type Gated<T extends TemplateWithGates> = T & { spec: { readinessGates: readonly { conditionType: string }[] } };

/**
 * The pod template with readiness gate InPlaceUpdateReady added when `policy` is not ReCreate (unchanged
 * otherwise, or when the gate is already there). Apply it to the pod being built, not to the App's stored
 * template, so revisions do not change with the policy.
 */
export function withInPlaceReadinessGate<T extends TemplateWithGates>(template: T, policy: string | undefined): T | Gated<T> {
  if (policy === undefined || policy === 'ReCreate') return template;
  const gates = template.spec.readinessGates ?? [];
  if (gates.some((g) => g.conditionType === IN_PLACE_GATE)) return template;
  return { ...template, spec: { ...template.spec, readinessGates: [...gates, { conditionType: IN_PLACE_GATE }] } };
}
