/**
 * The rolling update (upstream updateStatefulSetAfterInvariantEstablished): from the highest ordinal down to
 * the partition, replace pods not at the update revision, never letting more than maxUnavailable replicas be
 * unavailable (missing, terminating or not yet available all count). OnDelete and paused plan nothing.
 */
import { maxUnavailableOf } from '../../api/int-or-percent.ts';
import { PodUpdatePolicy, UpdateStrategyType } from '../../api/update-strategy.ts';
import type { ControllerRevision } from './kube-types.ts';
import { getPodRevision, isTerminating, isUnavailable } from './pod-predicates.ts';
import type { Accumulator, PodSet } from './pod-set.ts';
import { templateOf } from './revisions.ts';
import { deletePod } from './scale-plan.ts';
import { decideUpdateMethod } from './update-method.ts';

export function unavailableReplicas(set: PodSet): number {
  let n = 0;
  for (let ordinal = set.start; ordinal < set.end; ordinal++) if (isUnavailable(set.replicas.get(ordinal), set.minReadySeconds, set.now)) n++;
  return n;
}

export function maxUnavailable(set: PodSet): number {
  const r = maxUnavailableOf(set.app.spec.updateStrategy?.rollingUpdate?.maxUnavailable, set.end - set.start);
  return r.ok ? r.value : 1;
}

/** `paused`: spec paused, or a canary pause being entered now. */
export function planRollingUpdate(set: PodSet, acc: Accumulator, revisions: readonly ControllerRevision[], paused: boolean): void {
  const strategy = set.app.spec.updateStrategy;
  if ((strategy?.type ?? UpdateStrategyType.rollingUpdate) !== UpdateStrategyType.rollingUpdate) return;
  if (paused) return;
  let budget = maxUnavailable(set) - unavailableReplicas(set);
  const policy = strategy?.rollingUpdate?.podUpdatePolicy ?? PodUpdatePolicy.reCreate;
  for (const ordinal of outdatedOrdinals(set)) {
    if (budget <= 0) break;
    const pod = set.replicas.get(ordinal);
    if (!pod) continue;
    const fromRevision = revisions.find((r) => r.metadata.name === getPodRevision(pod));
    const method = decideUpdateMethod({ pod, from: fromRevision ? templateOf(fromRevision) : undefined, to: templateOf(set.update) ?? set.app.spec.template, podUpdatePolicy: policy });
    if (method.kind === 'recreate') acc.actions.push(deletePod(pod, ordinal, 'update'));
    budget--;
  }
}

/** Ordinals from the highest down to the partition whose live pod does not run the update revision. */
function outdatedOrdinals(set: PodSet): number[] {
  const out: number[] = [];
  for (let ordinal = set.end - 1; ordinal >= Math.max(set.start, set.partition); ordinal--) {
    const pod = set.replicas.get(ordinal);
    if (pod && !isTerminating(pod) && getPodRevision(pod) !== set.update.metadata.name) out.push(ordinal);
  }
  return out;
}
