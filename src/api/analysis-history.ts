/**
 * `status.analysisHistory`: the outcome of the analysis of the last few update revisions, so the outcome of a
 * rollout outlives the next one (`status.analysis` holds the checks of the update revision only). An entry is
 * added when the record in `status.analysis` is left for a new update revision; the newest entry comes last.
 */
import { Type, type Static } from '@sinclair/typebox';
import { AnalysisPhase } from './analysis.ts';
import { dateTime, int32, stringEnum } from './schema-kit.ts';

/** Revisions kept. */
export const MAX_ANALYSIS_HISTORY = 5;
/** Checks kept per revision (those that did not pass first). */
export const MAX_HISTORY_CHECKS = 16;
/** Characters kept of a measurement's value and message. */
export const MAX_HISTORY_TEXT = 256;

/**
 * How the analysis of a revision ended: Failed (a check failed or ended in errors), Aborted (the rollout was
 * aborted for another reason), Successful (the rollout completed without a failed check), Inconclusive (the
 * template changed while a check was inconclusive), Superseded (the template changed while checks ran).
 */
export const AnalysisOutcome = {
  successful: 'Successful',
  failed: 'Failed',
  aborted: 'Aborted',
  inconclusive: 'Inconclusive',
  superseded: 'Superseded',
} as const;
export type AnalysisOutcome = (typeof AnalysisOutcome)[keyof typeof AnalysisOutcome];

const tally = () => int32({ minimum: 0 });
const text = () => Type.Optional(Type.String({ maxLength: MAX_HISTORY_TEXT }));

export const CheckResultSchema = Type.Object({
  name: Type.String({ maxLength: 63 }),
  step: Type.Optional(int32({ description: 'Canary step index; absent: background.', minimum: 0 })),
  phase: stringEnum(Object.values(AnalysisPhase)),
  dryRun: Type.Optional(Type.Boolean()),
  successful: tally(),
  failed: tally(),
  inconclusive: tally(),
  errors: Type.Optional(tally()),
  value: text(),
  message: text(),
});
export type CheckResult = Static<typeof CheckResultSchema>;

export const AnalysisHistoryEntrySchema = Type.Object({
  revision: Type.String({ maxLength: 253 }),
  outcome: stringEnum(Object.values(AnalysisOutcome)),
  finishedAt: Type.Optional(dateTime({ description: 'The last measurement.' })),
  checks: Type.Array(CheckResultSchema, { description: 'Counts and last measurement.', maxItems: MAX_HISTORY_CHECKS }),
});
export type AnalysisHistoryEntry = Static<typeof AnalysisHistoryEntrySchema>;

export const AnalysisHistorySchema = Type.Array(AnalysisHistoryEntrySchema, {
  description: `Analysis outcome of the last ${MAX_ANALYSIS_HISTORY} earlier update revisions, oldest first.`,
  maxItems: MAX_ANALYSIS_HISTORY,
});
