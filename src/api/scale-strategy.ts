/** `spec.scaleStrategy`: how fast a Parallel App creates pods when it scales up. */
import { Type, type Static } from '@sinclair/typebox';
import type { CelRule } from './schema-kit.ts';
import { intOrString, PERCENT_1_TO_100_CEL } from './schema-kit.ts';

export const ScaleStrategySchema = Type.Object(
  {
    maxUnavailable: Type.Optional(
      intOrString({
        description:
          'Parallel only. New pods are created only while fewer than this many of the App’s pods are unavailable (not yet ready, terminating, failed or being updated): an integer ≥ 1 or a percentage of replicas (rounded down, at least 1). Unset: no limit.',
        maxLength: 4,
        'x-kubernetes-validations': [
          {
            rule: `type(self) == int ? self >= 1 : string(self).matches('${PERCENT_1_TO_100_CEL}')`,
            message: 'scaleStrategy.maxUnavailable must be an integer of at least 1 or a percentage from 1% to 100% (e.g. 25%)',
          },
        ],
      }),
    ),
  },
  { description: 'How pods are created on scale-up.' },
);
export type ScaleStrategy = Static<typeof ScaleStrategySchema>;

/** OrderedReady already creates one pod at a time, each after its predecessors are available: a limit means nothing there. */
export const scaleStrategyRules: CelRule[] = [
  {
    rule: `!has(self.scaleStrategy) || !has(self.scaleStrategy.maxUnavailable) || (has(self.podManagementPolicy) && self.podManagementPolicy == 'Parallel')`,
    message: 'scaleStrategy.maxUnavailable requires podManagementPolicy: Parallel (OrderedReady creates one pod at a time already)',
    fieldPath: '.scaleStrategy.maxUnavailable',
    reason: 'FieldValueForbidden',
  },
];
