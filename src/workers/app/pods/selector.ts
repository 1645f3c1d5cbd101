/**
 * metav1.LabelSelector semantics: matching a label set, and the string form the apiserver accepts in
 * `labelSelector=` queries and the scale subresource publishes (`status.labelSelector`).
 */
import type { LabelSelector } from '../../../api/meta.ts';

type Requirement = NonNullable<LabelSelector['matchExpressions']>[number];

function requirementMatches(r: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = labels[r.key];
  switch (r.operator) {
    case 'In':
      return has && value !== undefined && (r.values ?? []).includes(value);
    case 'NotIn':
      return !has || value === undefined || !(r.values ?? []).includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
  }
}

/** Whether `labels` satisfy `selector`. An empty selector matches nothing (as for workload controllers). */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (selectorIsEmpty(selector)) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  return (selector.matchExpressions ?? []).every((r) => requirementMatches(r, l));
}

export function selectorIsEmpty(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}

function requirementString(r: Requirement): string {
  const values = [...(r.values ?? [])].sort().join(',');
  switch (r.operator) {
    case 'In':
      return `${r.key} in (${values})`;
    case 'NotIn':
      return `${r.key} notin (${values})`;
    case 'Exists':
      return r.key;
    case 'DoesNotExist':
      return `!${r.key}`;
  }
}

/** The selector as a label-selector string (`a=b,c in (d,e),!f`), requirements sorted by key like upstream. */
export function selectorString(selector: LabelSelector): string {
  const parts: { key: string; text: string }[] = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) parts.push({ key: k, text: `${k}=${v}` });
  for (const r of selector.matchExpressions ?? []) parts.push({ key: r.key, text: requirementString(r) });
  parts.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return parts.map((p) => p.text).join(',');
}
