/**
 * Cross-field CEL rules of `App.spec` and of the App root. Kept apart from the field declarations because each
 * rule reads several fields; every rule is bounded by the maxItems/maxLength/maxProperties of what it walks.
 */
import type { CelRule } from './schema-kit.ts';
import { volumeClaimTemplatesPresenceRule } from './volume-claim-update.ts';

const LABELS = 'self.template.metadata.labels';
const HAS_LABELS = `(has(self.template.metadata) && has(${LABELS}))`;

/** The template's labels satisfy the selector, so the App selects every pod it creates (as upstream validates). */
export const selectorMatchesTemplateRules: CelRule[] = [
  {
    rule: `!has(self.selector.matchLabels) || self.selector.matchLabels.all(k, ${HAS_LABELS} && k in ${LABELS} && ${LABELS}[k] == self.selector.matchLabels[k])`,
    message: 'selector does not match template labels: every selector.matchLabels entry must be in template.metadata.labels',
    fieldPath: '.template.metadata.labels',
  },
  {
    rule:
      `!has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, ` +
      `e.operator == 'In' ? (has(e.values) && ${HAS_LABELS} && e.key in ${LABELS} && ${LABELS}[e.key] in e.values) : ` +
      `e.operator == 'NotIn' ? (!has(e.values) || !${HAS_LABELS} || !(e.key in ${LABELS}) || !(${LABELS}[e.key] in e.values)) : ` +
      `e.operator == 'Exists' ? (${HAS_LABELS} && e.key in ${LABELS}) : ` +
      `(!${HAS_LABELS} || !(e.key in ${LABELS})))`,
    message: 'selector does not match template labels: template.metadata.labels must satisfy every selector.matchExpressions entry',
    fieldPath: '.template.metadata.labels',
  },
];

/** The highest pod ordinal: ordinals are int32, as on StatefulSets (a pod named past it is not the App's replica). */
export const MAX_ORDINAL = 2_147_483_647;

/** The last ordinal, `ordinals.start + replicas - 1`, stays an int32 (CEL integers are 64-bit: no overflow here). */
export const ordinalRangeRules: CelRule[] = [
  {
    rule: `(has(self.ordinals) && has(self.ordinals.start) ? self.ordinals.start : 0) + (has(self.replicas) ? self.replicas : 1) - 1 <= ${MAX_ORDINAL}`,
    message: `ordinals.start + replicas - 1, the highest pod ordinal, must be at most ${MAX_ORDINAL}`,
    fieldPath: '.ordinals.start',
    reason: 'FieldValueInvalid',
  },
];

/** Fields immutable like on a StatefulSet, where presence can change too (required fields use `self == oldSelf`). */
function immutableOptional(field: string): CelRule {
  return {
    rule: `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
    message: `${field} is immutable`,
    fieldPath: `.${field}`,
  };
}

/** volumeClaimTemplates: present or absent for good; what may change inside is said by its own rules (volume-claim-update.ts). */
export const immutableSpecRules: CelRule[] = [immutableOptional('serviceName'), volumeClaimTemplatesPresenceRule];

/**
 * App names become pod names (`<app>-<ordinal>`), pod hostnames (DNS labels) and the revision label value
 * (`<app>-<hash>`, at most 63 characters): as for StatefulSets in practice, a name over 52 characters or with
 * dots would yield pods the apiserver rejects, so it is refused up front.
 */
export const APP_NAME_MAX_LENGTH = 52;
export const appRootRules: CelRule[] = [
  {
    rule: `self.metadata.name.size() <= ${APP_NAME_MAX_LENGTH}`,
    message: `App name must be at most ${APP_NAME_MAX_LENGTH} characters: pod names, hostnames and revision labels are derived from it`,
    fieldPath: '.metadata.name',
    reason: 'FieldValueInvalid',
  },
  {
    rule: "self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
    message: "App name must be a DNS label (lowercase letters, digits and '-'): pod hostnames are derived from it",
    fieldPath: '.metadata.name',
    reason: 'FieldValueInvalid',
  },
];
