/**
 * The per-pod decision "recreate, update in place, or refuse": the templates of
 * the pod's revision and of the update revision are diffed (`canUpdateInPlace`) and the App's
 * `podUpdatePolicy` decides (`decideUpdate`). A pod whose revision no longer exists cannot be diffed: it is
 * recreated under InPlaceIfPossible and refused under InPlaceOnly.
 */
import type { PodTemplateSpec } from '../../api/pod-template.ts';
import { decideUpdate, UpdatePolicy, type UpdateDecision } from './decide.ts';
import { canUpdateInPlace } from './diff.ts';
import { EMPTY_PLAN, type DiffResult } from './types.ts';
import { canonicalJson } from '../../common/canonical-json.ts';

interface UpdateDecisionInput {
  /** The revision the pod runs (its revision label). */
  fromRevision: string | undefined;
  /** Template of that revision, when the revision still exists. */
  from: PodTemplateSpec | undefined;
  to: PodTemplateSpec;
  podUpdatePolicy: string | undefined;
}

export function decideUpdateMethod(input: UpdateDecisionInput): UpdateDecision {
  // Revisions that differ only in their claims (volume growth): the pod itself does not change, so it is
  // relabelled in place whatever the policy, without a restart.
  if (input.from && canonicalJson(input.from) === canonicalJson(input.to)) return { mode: 'inPlace', plan: EMPTY_PLAN };
  // ReCreate (the default) needs no diff.
  if (input.podUpdatePolicy !== UpdatePolicy.inPlaceIfPossible && input.podUpdatePolicy !== UpdatePolicy.inPlaceOnly) return { mode: 'recreate' };
  const diff: DiffResult = input.from
    ? canUpdateInPlace(input.from, input.to, { resizeSupported: true })
    : { ok: false, reason: `the pod's revision ${input.fromRevision ?? '(none)'} no longer exists, so its template cannot be compared`, path: '' };
  return decideUpdate(input.podUpdatePolicy, diff);
}
