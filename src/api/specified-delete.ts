/**
 * The label `apps.ebb.dev/specified-delete: "true"` asks ebb to delete a pod and create it again with the same
 * identity (name, ordinal, claims) and the revision its ordinal should run. It is set on a live pod by a person
 * or a tool, never in the template: a template carrying it would have every new pod deleted again.
 */
import { GROUP } from './group.ts';
import type { CelRule } from './schema-kit.ts';

export const SPECIFIED_DELETE_LABEL = `${GROUP}/specified-delete`;
export const SPECIFIED_DELETE_VALUE = 'true';

export function isSpecifiedDelete(labels: Readonly<Record<string, string>> | undefined): boolean {
  return labels?.[SPECIFIED_DELETE_LABEL] === SPECIFIED_DELETE_VALUE;
}

/** Labels without the specified-delete label (what a new pod gets from its template). */
export function withoutSpecifiedDelete(labels: Readonly<Record<string, string>>): Record<string, string> {
  const { [SPECIFIED_DELETE_LABEL]: _dropped, ...rest } = labels;
  return rest;
}

export const specifiedDeleteRules: CelRule[] = [
  {
    rule: `!has(self.template.metadata) || !has(self.template.metadata.labels) || !('${SPECIFIED_DELETE_LABEL}' in self.template.metadata.labels)`,
    message: `template.metadata.labels must not carry ${SPECIFIED_DELETE_LABEL}: it is set on a live pod to have it recreated, and every new pod would be deleted again`,
    fieldPath: '.template.metadata.labels',
    reason: 'FieldValueForbidden',
  },
];
