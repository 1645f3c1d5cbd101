/**
 * A pod is never deleted when its replacement would be refused (pure part). Every delete that recreates a pod
 * (an update by recreation, a failed pod replaced) carries its replacement; the reconcile has the apiserver
 * dry-run one replacement per revision (`admission/dry-run.ts`), and a plan made knowing the refused revisions
 * leaves their deletes out and holds the rollout instead.
 */
import { withInPlaceReadinessGate } from '../../inplace/index.ts';
import type { Action, Replacement } from '../model/actions.ts';
import type { Named, Pod } from '../../../kube/types.ts';
import { newPodForOrdinal } from '../pods/builder.ts';
import { claimsToCreate } from '../ownership/pvc-retention.ts';
import type { PodSet } from '../pods/pod-set.ts';
import { revisionForOrdinal } from '../rollout/update-order.ts';
import { templateOf } from '../revisions/revisions.ts';
import type { Refusal, Refusals } from '../model/refusals.ts';

/** A rollout held because the replacements of `revision` would be refused. */
export interface Hold {
  revision: string;
  refusal: Refusal;
  /** Pods left running that the plan would otherwise have deleted. */
  pods: string[];
}

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

type Guarded = Extract<Action, { kind: 'deletePod' }> & { replacement: Replacement };

const isGuarded = (a: Action): a is Guarded => a.kind === 'deletePod' && a.replacement !== undefined;

/** The replacements to dry-run: one per revision (the first delete's), in plan order. */
export function replacementsToCheck(actions: readonly Action[]): Replacement[] {
  const byRevision = new Map<string, Replacement>();
  for (const a of actions) if (isGuarded(a) && !byRevision.has(a.replacement.revision)) byRevision.set(a.replacement.revision, a.replacement);
  return [...byRevision.values()];
}

/** Whether the plan deletes a pod to recreate it (so the dry run vouched for its replacement). */
export const recreatesPods = (actions: readonly Action[]): boolean => actions.some(isGuarded);

/**
 * The actions without the deletes whose replacement revision is refused (and without the Events of those
 * deletes' fallbacks), and the hold to report: the first refused revision, with the pods it keeps.
 */
export function holdRefused(actions: readonly Action[], refused: Refusals | undefined): { actions: Action[]; hold: Hold | undefined } {
  if (!refused || refused.size === 0) return { actions: [...actions], hold: undefined };
  let hold: Hold | undefined;
  const kept: Action[] = [];
  for (const a of actions) {
    const refusal = isGuarded(a) ? refused.get(a.replacement.revision) : undefined;
    if (!refusal || !isGuarded(a)) {
      kept.push(a);
      continue;
    }
    hold ??= { revision: a.replacement.revision, refusal, pods: [] };
    if (hold.revision === a.replacement.revision) hold.pods.push(a.name);
  }
  return { actions: kept, hold };
}
