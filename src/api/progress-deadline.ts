/**
 * `spec.progressDeadlineSeconds` and `rollingUpdate.pauseOnProgressDeadline`: a rollout (or canary step) that
 * brings no further pod to the update revision and available for that long is reported (condition Progressing
 * False, reason ProgressDeadlineExceeded, and an Event) and, when asked, paused. The clock lives in
 * `status.rolloutProgress`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { dateTime, int32 } from './schema-kit.ts';
import type { CelRule } from './schema-kit.ts';

export const progressDeadlineSeconds = () =>
  Type.Optional(
    int32({
      description:
        'Seconds a rollout or canary step may go without one more pod becoming updated and available before it is reported as stuck (condition Progressing False, reason ProgressDeadlineExceeded). Must exceed minReadySeconds. Unset: no deadline.',
      minimum: 1,
    }),
  );

export const pauseOnProgressDeadline = () =>
  Type.Optional(
    Type.Boolean({
      description:
        'When the progress deadline is exceeded, also set paused to true, so the rollout stops until resumed. Requires spec.progressDeadlineSeconds.',
    }),
  );

const RU = 'self.updateStrategy.rollingUpdate';

/** App.spec rules of the progress deadline. */
export const progressDeadlineRules: CelRule[] = [
  {
    rule: '!has(self.progressDeadlineSeconds) || self.progressDeadlineSeconds > (has(self.minReadySeconds) ? self.minReadySeconds : 0)',
    message: 'progressDeadlineSeconds must be greater than minReadySeconds: a pod counts as progress only once it has been ready for minReadySeconds',
    fieldPath: '.progressDeadlineSeconds',
    reason: 'FieldValueInvalid',
  },
  {
    rule: `!has(self.updateStrategy) || !has(${RU}) || !has(${RU}.pauseOnProgressDeadline) || !${RU}.pauseOnProgressDeadline || has(self.progressDeadlineSeconds)`,
    message: 'updateStrategy.rollingUpdate.pauseOnProgressDeadline requires spec.progressDeadlineSeconds',
    fieldPath: '.updateStrategy.rollingUpdate.pauseOnProgressDeadline',
    reason: 'FieldValueRequired',
  },
];

export const RolloutProgressSchema = Type.Object(
  {
    revision: Type.String({ description: 'The update revision this progress is about.' }),
    updatedAvailableReplicas: int32({ description: 'The most pods seen at the update revision and available during this rollout.', minimum: 0 }),
    lastProgressTime: dateTime({ description: 'When updatedAvailableReplicas last grew (or the rollout started or resumed).' }),
  },
  {
    description: 'The progress clock of spec.progressDeadlineSeconds; absent without a deadline, without a rollout under way, and while the rollout is paused.',
  },
);
export type RolloutProgress = Static<typeof RolloutProgressSchema>;
