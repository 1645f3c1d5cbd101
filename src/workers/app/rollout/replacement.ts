/**
 * What a pod created or recreated at an ordinal is: the pod from the revision the partition gives that ordinal
 * (upstream newVersionedStatefulSetPod), and, for a delete that recreates it, the claims that would be created
 * with it. The admission room dry-runs these replacements; scaling and the rollout build them here.
 */
import { withInPlaceReadinessGate } from '../../inplace/index.ts';
import type { Replacement } from '../model/actions.ts';
import type { Named, Pod } from '../../../kube/types.ts';
import { newPodForOrdinal } from '../pods/builder.ts';
import { claimsToCreate } from '../ownership/pvc-retention.ts';
import type { PodSet } from '../pods/pod-set.ts';
import { templateOf } from '../revisions/revisions.ts';
import { revisionForOrdinal } from './update-order.ts';

/** The pod for `ordinal`, from the revision that ordinal is created from (upstream newVersionedStatefulSetPod). */
export function podForOrdinal(set: PodSet, ordinal: number): { pod: Named<Pod>; revision: string } {
  const revision = revisionForOrdinal(set, ordinal);
  // The gate goes on the pod, not into the revision: revisions do not change with the policy.
  const template = withInPlaceReadinessGate(templateOf(revision) ?? set.app.spec.template, set.rollout.podUpdatePolicy);
  return { pod: newPodForOrdinal(set.app, template, revision.metadata.name, ordinal), revision: revision.metadata.name };
}

/**
 * What a pod deleted at `ordinal` would be recreated as: its pod, and the claims of its ordinal that would be
 * created with it. A pod being replaced almost always has its claims already (they outlive it), so only
 * claims known to be missing are checked; when the claims were not read, none (the claim templates' schema is
 * checked at admission, and a claim refused later is reported as FailedCreatePod).
 */
export function replacementFor(set: PodSet, ordinal: number): Replacement {
  const { pod, revision } = podForOrdinal(set, ordinal);
  const missing = set.claims ? claimsToCreate(set.app, set.claims, ordinal).create : [];
  const claims = missing.flatMap((a) => (a.kind === 'createPvc' ? [a.pvc] : []));
  return { revision, pod, claims };
}
