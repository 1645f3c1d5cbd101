/** `spec.updateStrategy`: how a new template revision reaches the pods (rolling, in place, canary, paused). */
import { Type, type Static } from '@sinclair/typebox';
import { int32, intOrString, PERCENT_1_TO_100_CEL, stringEnum } from './schema-kit.ts';
import { UnorderedUpdateSchema } from './priority.ts';
import { pauseOnProgressDeadline } from './progress-deadline.ts';
import { rollbackOnProgressDeadline } from './rollout-abort.ts';
import { AnalysisSchema, analysisNameRules, checkNames } from './analysis.ts';

export const DEFAULT_MAX_UNAVAILABLE = 1;
export const MAX_GRACE_PERIOD_SECONDS = 300;
export const MAX_CANARY_STEPS = 32;
/** A Go-style duration of hours, minutes, seconds and milliseconds, e.g. `90s`, `1h30m`, `1.5m`. */
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';

const intOrPercentRule = (what: string) => ({
  rule: `type(self) == int ? self >= 1 : string(self).matches('${PERCENT_1_TO_100_CEL}')`,
  message: `${what} must be an integer of at least 1 or a percentage from 1% to 100% (e.g. 25%)`,
});

export const CanaryPauseSchema = Type.Object(
  {
    duration: Type.Optional(
      Type.String({
        description: 'How long to wait before the next step, e.g. 60s or 5m. Omit to pause until rollingUpdate.paused is set back to false.',
        maxLength: 32,
        pattern: DURATION_PATTERN,
      }),
    ),
  },
  { description: 'Stop the rollout: indefinitely (sets rollingUpdate.paused) or for a duration.' },
);

export const CanaryStepSchema = Type.Object(
  {
    replicas: Type.Optional(
      intOrString({
        maxLength: 4,
        description: 'Update pods until this many (or this percentage of spec.replicas, rounded up) run the update revision.',
        'x-kubernetes-validations': [intOrPercentRule('canary step replicas')],
      }),
    ),
    pause: Type.Optional(CanaryPauseSchema),
    analysis: Type.Optional(
      checkNames(
        'Run these checks (names in rollingUpdate.analysis.checks), then go on (all passed), pause the rollout (one inconclusive) or abort it (one failed).',
      ),
    ),
  },
  {
    description: 'One step: exactly one of replicas, pause or analysis.',
    'x-kubernetes-validations': [
      {
        rule: '(has(self.replicas) ? 1 : 0) + (has(self.pause) ? 1 : 0) + (has(self.analysis) ? 1 : 0) == 1',
        message: 'each canary step must set exactly one of replicas, pause or analysis',
      },
    ],
  },
);
export type CanaryStep = Static<typeof CanaryStepSchema>;

export const CanarySchema = Type.Object(
  {
    steps: Type.Array(CanaryStepSchema, {
      description: 'Steps run in order for each new revision; after the last one the rollout completes.',
      maxItems: MAX_CANARY_STEPS,
    }),
  },
  { description: 'A canary rollout: update some pods, pause, update more.' },
);
export type Canary = Static<typeof CanarySchema>;

export const PodUpdatePolicy = { reCreate: 'ReCreate', inPlaceIfPossible: 'InPlaceIfPossible', inPlaceOnly: 'InPlaceOnly' } as const;

export const RollingUpdateSchema = Type.Object(
  {
    partition: Type.Optional(int32({ description: 'Only pods with an ordinal at least this are updated (as for StatefulSets).', minimum: 0, default: 0 })),
    maxUnavailable: Type.Optional(
      intOrString({
        description: 'Most pods unavailable at once during the update: an integer ≥ 1 or a percentage of replicas (rounded down, at least 1).',
        default: DEFAULT_MAX_UNAVAILABLE,
        maxLength: 4,
        'x-kubernetes-validations': [intOrPercentRule('maxUnavailable')],
      }),
    ),
    paused: Type.Optional(Type.Boolean({ description: 'No pod is updated while true; scaling still happens.', default: false })),
    podUpdatePolicy: Type.Optional(
      stringEnum([PodUpdatePolicy.reCreate, PodUpdatePolicy.inPlaceIfPossible, PodUpdatePolicy.inPlaceOnly], {
        description:
          'ReCreate deletes and recreates pods. InPlaceIfPossible patches images (and labels/annotations) in place and recreates when that cannot express the change. InPlaceOnly never recreates.',
        default: PodUpdatePolicy.reCreate,
      }),
    ),
    inPlaceUpdateStrategy: Type.Optional(
      Type.Object(
        {
          gracePeriodSeconds: Type.Optional(
            int32({
              description: 'Seconds between marking a pod not ready and patching it, so endpoints drain.',
              minimum: 0,
              maximum: MAX_GRACE_PERIOD_SECONDS,
              default: 0,
            }),
          ),
        },
        { description: 'Tuning of in-place updates.' },
      ),
    ),
    canary: Type.Optional(CanarySchema),
    unorderedUpdate: Type.Optional(UnorderedUpdateSchema),
    pauseOnProgressDeadline: pauseOnProgressDeadline(),
    rollbackOnProgressDeadline: rollbackOnProgressDeadline(),
    analysis: Type.Optional(AnalysisSchema),
  },
  { description: 'Parameters of the RollingUpdate strategy.', 'x-kubernetes-validations': analysisNameRules },
);
export type RollingUpdate = Static<typeof RollingUpdateSchema>;

export const UpdateStrategyType = { rollingUpdate: 'RollingUpdate', onDelete: 'OnDelete' } as const;

export const UpdateStrategySchema = Type.Object(
  {
    type: Type.Optional(
      stringEnum([UpdateStrategyType.rollingUpdate, UpdateStrategyType.onDelete], {
        description: 'RollingUpdate updates pods automatically; OnDelete only when someone deletes them.',
        default: UpdateStrategyType.rollingUpdate,
      }),
    ),
    rollingUpdate: Type.Optional(RollingUpdateSchema),
  },
  {
    description: 'How pods are updated to a new revision.',
    default: {},
    'x-kubernetes-validations': [
      {
        rule: "self.type == 'RollingUpdate' || !has(self.rollingUpdate)",
        message: 'rollingUpdate may only be set when type is RollingUpdate',
        fieldPath: '.rollingUpdate',
      },
    ],
  },
);
export type UpdateStrategy = Static<typeof UpdateStrategySchema>;
