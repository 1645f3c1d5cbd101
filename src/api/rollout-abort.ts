/**
 * Aborting a rollout, and moving on from an abort. An abort sends every pod back to the stable revision
 * (`status.currentRevision`) without touching `spec.template`; it is recorded in `status.abort`.
 *
 * Requests come from people as App annotations (what `ebb rollout abort | retry | promote` write, the way
 * `kubectl rollout restart` writes one): they need only the right to patch the App, never to write its
 * status, and every request names the revision it is about, so a request made for one rollout never acts
 * on the next. Aborts the worker decides itself (a progress deadline, later an analysis) are recorded in
 * status only. A new update revision ends an abort; so does a retry.
 */
import { Type, type Static } from '@sinclair/typebox';
import { GROUP } from './group.ts';
import { dateTime, stringEnum, type CelRule } from './schema-kit.ts';

/** App annotations: requests about the rollout in progress. */
export const RolloutAnnotation = {
  /** Abort the rollout to this update revision (a revision name). Removing it retries a requested abort. */
  abort: `rollout.${GROUP}/abort`,
  /** Retry: ends the abort recorded at this time (the value is `status.abort.abortedAt`). */
  retry: `rollout.${GROUP}/retry`,
  /** Promote the rollout to this update revision: its remaining canary steps are skipped. */
  promote: `rollout.${GROUP}/promote`,
  /**
   * Promote fully (`ebb rollout promote --full`): as `promote`, and the revision's analysis is skipped too, the
   * background checks included. Written with `promote` naming the same revision.
   */
  promoteFull: `rollout.${GROUP}/promote-full`,
  /**
   * Written by ebb only, in the same write that sets `rollingUpdate.paused: true`: the pause is ebb's own
   * (`<cause>/<revision>`, see `PauseCause`), so an abort lifts it. A pause without it is a person's and holds.
   */
  pausedBy: `rollout.${GROUP}/paused-by`,
} as const;

/** What paused a rollout by itself: the value of annotation `rollout.apps.ebb.dev/paused-by` names one. */
export const PauseCause = {
  /** A canary `pause: {}` step. */
  canaryStep: 'CanaryStep',
  /** An analysis check (a step's or a background one) turned inconclusive. */
  analysisInconclusive: 'AnalysisInconclusive',
  /** The progress deadline passed with pauseOnProgressDeadline. */
  progressDeadline: 'ProgressDeadlineExceeded',
  /** A failure found by the worker would have aborted the rollout, but the abort was refused (see abort-refusal). */
  abortRefused: 'AbortRefused',
} as const;
export type PauseCause = (typeof PauseCause)[keyof typeof PauseCause];

/** The value of the paused-by annotation: ebb paused the rollout to `revision` for `cause`. */
export const pausedByValue = (cause: PauseCause, revision: string): string => `${cause}/${revision}`;

/** The cause and revision the paused-by annotation names, or undefined when it names none ebb writes. */
export function parsePausedBy(value: string | undefined): { cause: PauseCause; revision: string } | undefined {
  const at = value?.indexOf('/') ?? -1;
  if (value === undefined || at < 0) return undefined;
  const cause = Object.values(PauseCause).find((c) => c === value.slice(0, at));
  return cause ? { cause, revision: value.slice(at + 1) } : undefined;
}

/** Why a rollout was aborted: a typed value any trigger (a person, the deadline, an analysis) sets. */
export const AbortReason = {
  /** `ebb rollout abort` (annotation `rollout.apps.ebb.dev/abort`). */
  requested: 'AbortRequested',
  /** spec.progressDeadlineSeconds passed with rollingUpdate.rollbackOnProgressDeadline. */
  progressDeadline: 'ProgressDeadlineExceeded',
  /** An analysis judged the update revision failed (`measurement` says what it measured). */
  analysisFailed: 'AnalysisFailed',
} as const;
export type AbortReason = (typeof AbortReason)[keyof typeof AbortReason];

export const AbortMeasurementSchema = Type.Object(
  {
    analysis: Type.String({ description: 'The analysis (its name) that failed.', maxLength: 253 }),
    value: Type.Optional(Type.String({ description: 'What was measured, as text.', maxLength: 1024 })),
    condition: Type.Optional(Type.String({ description: 'The condition the value failed.', maxLength: 1024 })),
    measuredAt: Type.Optional(dateTime({ description: 'When the failing measurement was taken.' })),
  },
  { description: 'The measurement that failed, when an analysis aborted the rollout.' },
);
export type AbortMeasurement = Static<typeof AbortMeasurementSchema>;

export const AbortStatusSchema = Type.Object(
  {
    revision: Type.String({ description: 'The update revision whose rollout was aborted.' }),
    reason: stringEnum([AbortReason.requested, AbortReason.progressDeadline, AbortReason.analysisFailed], { description: 'Why it was aborted.' }),
    message: Type.String({ description: 'What happened, for people.', maxLength: 4096 }),
    abortedAt: dateTime({ description: 'When it was aborted; `ebb rollout retry` names this time.' }),
    measurement: Type.Optional(AbortMeasurementSchema),
  },
  {
    description:
      'The rollout to updateRevision is aborted: every pod goes back to currentRevision, spec.template unchanged. Ends with a new template revision or a retry.',
  },
);
export type AbortStatus = Static<typeof AbortStatusSchema>;

export const rollbackOnProgressDeadline = () =>
  Type.Optional(
    Type.Boolean({
      description:
        'When the progress deadline is exceeded, abort the rollout: every pod goes back to the stable revision (status.currentRevision) and status.abort says why. Requires spec.progressDeadlineSeconds.',
    }),
  );

const RU = 'self.updateStrategy.rollingUpdate';

/** App.spec rule of rollbackOnProgressDeadline. */
export const rollbackOnDeadlineRules: CelRule[] = [
  {
    rule: `!has(self.updateStrategy) || !has(${RU}) || !has(${RU}.rollbackOnProgressDeadline) || !${RU}.rollbackOnProgressDeadline || has(self.progressDeadlineSeconds)`,
    message: 'updateStrategy.rollingUpdate.rollbackOnProgressDeadline requires spec.progressDeadlineSeconds',
    fieldPath: '.updateStrategy.rollingUpdate.rollbackOnProgressDeadline',
    reason: 'FieldValueRequired',
  },
];
