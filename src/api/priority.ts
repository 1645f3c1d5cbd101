/**
 * `spec.updateStrategy.rollingUpdate.unorderedUpdate`: pods are updated in an order of priority computed from
 * their labels instead of from the highest ordinal down. Parallel pod management only (see `priorityRules`).
 */
import { Type, type Static } from '@sinclair/typebox';
import { labelSelector } from './meta.ts';
import { int32, LABEL_KEY_CEL_PATTERN, LABEL_KEY_MAX_LENGTH } from './schema-kit.ts';
import type { CelRule } from './schema-kit.ts';

export const MAX_WEIGHT_TERMS = 16;
export const MAX_ORDER_TERMS = 8;
export const MIN_PRIORITY_WEIGHT = 1;
export const MAX_PRIORITY_WEIGHT = 100;

export const WeightTermSchema = Type.Object(
  {
    weight: int32({
      description: 'Added to the priority of every pod matchSelector selects; the pods with the highest sum are updated first.',
      minimum: MIN_PRIORITY_WEIGHT,
      maximum: MAX_PRIORITY_WEIGHT,
    }),
    matchSelector: labelSelector({ description: 'The pods this weight applies to (an empty selector selects every pod).' }),
  },
  { description: 'One weight term: its weight counts for the pods its selector matches.' },
);
export type WeightTerm = Static<typeof WeightTermSchema>;

export const OrderTermSchema = Type.Object(
  {
    orderedKey: Type.String({
      description:
        'A pod label whose value orders the pods: the integer its value ends with (5 in "5", 10 in "db-10"), highest first. A value that ends in no digit is ignored and reported in condition PriorityLabelIgnored.',
      minLength: 1,
      maxLength: LABEL_KEY_MAX_LENGTH,
      'x-kubernetes-validations': [{ rule: `self.matches('${LABEL_KEY_CEL_PATTERN}')`, message: 'orderedKey must be a label key' }],
    }),
  },
  { description: 'One order term: a label key whose value orders the pods.' },
);
export type OrderTerm = Static<typeof OrderTermSchema>;

export const PriorityStrategySchema = Type.Object(
  {
    weightPriority: Type.Optional(
      Type.Array(WeightTermSchema, {
        description: 'Weight terms: a pod’s priority is the sum of the weights whose selector matches it. Ties go to the highest ordinal.',
        minItems: 1,
        maxItems: MAX_WEIGHT_TERMS,
      }),
    ),
    orderPriority: Type.Optional(
      Type.Array(OrderTermSchema, {
        description:
          'Order terms, by precedence: a pod is ordered by the first key whose label it carries with an integer value; pods ordered by an earlier key go first. Pods with none go last. Ties go to the highest ordinal.',
        minItems: 1,
        maxItems: MAX_ORDER_TERMS,
      }),
    ),
  },
  {
    description: 'How the priority of a pod is computed: exactly one of weightPriority or orderPriority.',
    'x-kubernetes-validations': [
      { rule: 'has(self.weightPriority) != has(self.orderPriority)', message: 'priorityStrategy must set exactly one of weightPriority or orderPriority' },
    ],
  },
);
export type PriorityStrategy = Static<typeof PriorityStrategySchema>;

export const UnorderedUpdateSchema = Type.Object(
  {
    priorityStrategy: PriorityStrategySchema,
  },
  {
    description:
      'Update pods in priority order instead of from the highest ordinal down (Parallel only). The partition then counts pods: the partition - ordinals.start pods of lowest priority keep the current revision.',
  },
);
export type UnorderedUpdate = Static<typeof UnorderedUpdateSchema>;

const UNORDERED = 'self.updateStrategy.rollingUpdate.unorderedUpdate';

/** App.spec rules: a priority order needs Parallel pod management (OrderedReady updates strictly by ordinal). */
export const priorityRules: CelRule[] = [
  {
    rule:
      `!has(self.updateStrategy) || !has(self.updateStrategy.rollingUpdate) || !has(${UNORDERED}) || ` +
      `(has(self.podManagementPolicy) && self.podManagementPolicy == 'Parallel')`,
    message: 'updateStrategy.rollingUpdate.unorderedUpdate requires podManagementPolicy Parallel: OrderedReady updates pods strictly by ordinal',
    fieldPath: '.updateStrategy.rollingUpdate.unorderedUpdate',
    reason: 'FieldValueForbidden',
  },
];
