/** Shared metav1 shapes: object metadata, label selectors and conditions. */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import {
  dateTime,
  int64,
  type KubeObjectOptions,
  labelMap,
  LABEL_KEY_CEL_PATTERN,
  LABEL_KEY_MAX_LENGTH,
  LABEL_VALUE_PATTERN,
  listMap,
  stringEnum,
  stringMap,
} from './schema-kit.ts';

/**
 * The object metadata ebb reads and writes. Only for TypeScript types: a CRD root's `metadata` is validated by
 * the apiserver itself and must stay `{type: object}` in the schema.
 */
export const ObjectMetaSchema = Type.Object({
  name: Type.Optional(Type.String()),
  generateName: Type.Optional(Type.String()),
  namespace: Type.Optional(Type.String()),
  uid: Type.Optional(Type.String()),
  resourceVersion: Type.Optional(Type.String()),
  generation: Type.Optional(Type.Integer()),
  creationTimestamp: Type.Optional(Type.String()),
  deletionTimestamp: Type.Optional(Type.String()),
  deletionGracePeriodSeconds: Type.Optional(Type.Integer()),
  labels: Type.Optional(stringMap()),
  annotations: Type.Optional(stringMap()),
  finalizers: Type.Optional(Type.Array(Type.String())),
  ownerReferences: Type.Optional(
    Type.Array(
      Type.Object({
        apiVersion: Type.String(),
        kind: Type.String(),
        name: Type.String(),
        uid: Type.String(),
        controller: Type.Optional(Type.Boolean()),
        blockOwnerDeletion: Type.Optional(Type.Boolean()),
      }),
    ),
  ),
});
export type ObjectMeta = Static<typeof ObjectMetaSchema>;

const SELECTOR_MAX_EXPRESSIONS = 32;
const SELECTOR_MAX_VALUES = 64;

/**
 * A requirement's key and values are a label key and label values, as upstream validates them: the selector
 * becomes a `labelSelector=` query and `status.labelSelector`, where a `,`, `(` or space in a key or value
 * would add requirements of its own.
 */
export const LabelSelectorRequirementSchema = Type.Object(
  {
    key: Type.String({
      description: 'The label key the selector applies to.',
      minLength: 1,
      maxLength: LABEL_KEY_MAX_LENGTH,
      'x-kubernetes-validations': [
        {
          rule: `self.matches('${LABEL_KEY_CEL_PATTERN}') && self.indexOf('/') <= 253`,
          message:
            "matchExpressions key must be a label key: an optional DNS subdomain prefix of at most 253 characters and '/', then a name of at most 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit",
        },
      ],
    }),
    operator: stringEnum(['In', 'NotIn', 'Exists', 'DoesNotExist'], { description: 'How the key relates to the values.' }),
    values: Type.Optional(
      Type.Array(Type.String({ maxLength: 63, pattern: LABEL_VALUE_PATTERN }), {
        description: 'For In and NotIn: a non-empty set of values. For Exists and DoesNotExist: empty.',
        maxItems: SELECTOR_MAX_VALUES,
      }),
    ),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",
        message: 'values must be non-empty for operators In and NotIn, and empty for Exists and DoesNotExist',
      },
    ],
  },
);

const labelSelectorProperties = {
  matchLabels: Type.Optional(labelMap('Labels a pod must carry with exactly these values.')),
  matchExpressions: Type.Optional(
    Type.Array(LabelSelectorRequirementSchema, {
      description: 'Requirements the labels of a pod must all meet.',
      maxItems: SELECTOR_MAX_EXPRESSIONS,
    }),
  ),
};

/** metav1.LabelSelector (atomic, as upstream), with extra options such as CEL rules. */
export function labelSelector(opts: KubeObjectOptions = {}): TObject<typeof labelSelectorProperties> {
  return Type.Object(labelSelectorProperties, { ...opts, 'x-kubernetes-map-type': 'atomic' });
}

export const LabelSelectorSchema = labelSelector();
export type LabelSelector = Static<typeof LabelSelectorSchema>;

const REASON_PATTERN = '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$';
const CONDITION_TYPE_PATTERN = '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$';

/** metav1.Condition, with the same required fields and limits. */
export const ConditionSchema = Type.Object({
  type: Type.String({ description: 'Condition type, e.g. Progressing or Available.', maxLength: 316, pattern: CONDITION_TYPE_PATTERN }),
  status: stringEnum(['True', 'False', 'Unknown']),
  reason: Type.String({ description: 'Machine-readable CamelCase reason for the last transition.', minLength: 1, maxLength: 1024, pattern: REASON_PATTERN }),
  message: Type.String({ description: 'Human-readable details.', maxLength: 32768 }),
  lastTransitionTime: dateTime({ description: 'When the status last changed.' }),
  observedGeneration: Type.Optional(int64({ description: 'The .metadata.generation the condition was computed from.', minimum: 0 })),
});
export type Condition = Static<typeof ConditionSchema>;

export function conditionList(description: string) {
  return listMap(ConditionSchema, ['type'], { description, maxItems: 32 });
}
