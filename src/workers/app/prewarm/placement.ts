/**
 * Whether a pod of a template may be placed on a node, as far as the node's own labels, fields and taints say
 * (pure): the template's `nodeSelector`, its required node affinity, and its tolerations of the node's
 * NoSchedule and NoExecute taints (a cordoned node counts as tainted `node.kubernetes.io/unschedulable`), the
 * way kube-scheduler's NodeAffinity, TaintToleration and NodeUnschedulable filters judge them. Resources, pod
 * (anti-)affinity and topology spread are left to the scheduler: a node that passes here may still be refused.
 */
import type { PodTemplateSpec } from '../../../api/pod-template.ts';
import { untoleratedTaint, type Toleration } from '../../../kube/tolerations.ts';
import type { NodeFacts } from '../model/node-facts.ts';

interface Requirement {
  key: string;
  operator: string;
  values?: string[] | undefined;
}

interface Term {
  matchExpressions?: Requirement[] | undefined;
  matchFields?: Requirement[] | undefined;
}

const INTEGER = /^-?[0-9]+$/;

/** `value` against the one integer of `values`: its sign, or NaN (matching neither) when either is no integer. */
function compare(value: string | undefined, values: readonly string[]): number {
  const bound = values[0];
  if (value === undefined || bound === undefined || values.length !== 1 || !INTEGER.test(value) || !INTEGER.test(bound)) return NaN;
  return Math.sign(Number(value) - Number(bound));
}

/** One requirement against a value that is present or not (`Gt`/`Lt` compare integers, as upstream). */
export function requirementMatches(req: Requirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
      return compare(value, values) > 0;
    case 'Lt':
      return compare(value, values) < 0;
    default:
      return false;
  }
}

/** A node selector term: every expression on the labels and every field (only `metadata.name` exists) holds; an empty term matches nothing. */
export function termMatches(term: Term, node: NodeFacts): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  return (
    exprs.every((r) => requirementMatches(r, node.labels[r.key])) &&
    fields.every((r) => requirementMatches(r, r.key === 'metadata.name' ? node.name : undefined))
  );
}

/** The template's tolerations, as written. */
export const tolerationsOf = (template: PodTemplateSpec | undefined): Toleration[] =>
  (((template?.spec ?? {}) as Record<string, unknown>)['tolerations'] ?? []) as Toleration[];

/** Why a pod of `template` cannot go to `node`, or undefined when nothing on the node forbids it. */
export function placementRefusal(template: PodTemplateSpec | undefined, node: NodeFacts): string | undefined {
  const spec = (template?.spec ?? {}) as Record<string, unknown>;
  const selector = (spec['nodeSelector'] ?? {}) as Record<string, string>;
  for (const [key, value] of Object.entries(selector)) if (node.labels[key] !== value) return `label ${key} is not ${value}`;
  const affinity = spec['affinity'] as { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: Term[] } } } | undefined;
  const terms = affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms !== undefined && !terms.some((t) => termMatches(t, node))) return 'no required node affinity term matches';
  const untolerated = untoleratedTaint(tolerationsOf(template), node);
  return untolerated ? `taint ${untolerated.key}:${untolerated.effect} not tolerated` : undefined;
}

export const canPlace = (template: PodTemplateSpec | undefined, node: NodeFacts): boolean => placementRefusal(template, node) === undefined;
