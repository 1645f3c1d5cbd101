/**
 * The per-pod decision "recreate or update in place". This is the seam for in-place updates (DESIGN.md
 * section 5): today every update is a recreate (delete, then the pod is created again from the update
 * revision). The in-place path will return `inPlace` here for policies other than ReCreate when the
 * templates differ only in what can change in place.
 */
import type { PodTemplateSpec } from '../../api/pod-template.ts';
import type { Pod } from './kube-types.ts';

export type UpdateMethod = { kind: 'recreate'; reason: string } | { kind: 'inPlace'; reason: string };

export interface UpdateDecisionInput {
  pod: Pod;
  /** Template of the revision the pod runs, when that revision still exists. */
  from: PodTemplateSpec | undefined;
  to: PodTemplateSpec;
  podUpdatePolicy: string;
}

export function decideUpdateMethod(_input: UpdateDecisionInput): UpdateMethod {
  return { kind: 'recreate', reason: 'in-place updates are not implemented yet' };
}
