/**
 * Analysis: checks that judge the update revision while it rolls out. A canary step `analysis` runs its checks
 * and then goes on (every check passed), pauses (one was inconclusive) or aborts the rollout (one failed);
 * `rollingUpdate.analysis` runs in the background from the first updated pod to the end of the rollout.
 *
 * Each check measures every `interval` (on timers, never a polling loop) and records its measurements in
 * `status.analysis` (the last ten of each check). It passes after `count` measurements with at most
 * `failureLimit` failed and `inconclusiveLimit` inconclusive ones; one more failure fails it.
 */
import { Type, type Static } from '@sinclair/typebox';
import { dateTime, dnsLabel, int32, stringEnum, type CelRule } from './schema-kit.ts';

/** A Go-style duration (same grammar as canary pauses). */
const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';
export const MAX_ANALYSIS_CHECKS = 4;
export const MAX_MEASUREMENT_HISTORY = 10;
export const DEFAULT_ANALYSIS_INTERVAL = '30s';

export const PodHealthSchema = Type.Object(
  {
    maxRestarts: Type.Optional(
      int32({ description: 'Most container restarts an updated pod may have (summed over its containers). Default 2.', minimum: 0, maximum: 1000 }),
    ),
    maxNotReadySeconds: Type.Optional(
      int32({
        description: 'Longest an updated pod may stay not ready (since it was created or last turned not ready), its readiness gates included. Default 300.',
        minimum: 1,
        maximum: 86400,
      }),
    ),
    allowCrashLoop: Type.Optional(Type.Boolean({ description: 'A container in CrashLoopBackOff does not by itself fail the measurement. Default false.' })),
  },
  {
    description:
      "Built in, needing nothing: the updated pods' health. A measurement fails when an updated pod crash-loops, restarted more than maxRestarts times, or stayed not ready (or with a readiness gate not True) longer than maxNotReadySeconds; it is inconclusive while no pod runs the update revision.",
  },
);
export type PodHealth = Static<typeof PodHealthSchema>;

export const AnalysisCheckSchema = Type.Object(
  {
    name: dnsLabel('The check, unique in its list; status and Events name it.'),
    interval: Type.Optional(
      Type.String({
        description: `Time between measurements, from 1s to 24h. Default ${DEFAULT_ANALYSIS_INTERVAL}. The first is taken when the check starts.`,
        maxLength: 32,
        pattern: DURATION_PATTERN,
        'x-kubernetes-validations': [
          { rule: "duration(self) >= duration('1s') && duration(self) <= duration('24h')", message: 'interval must be from 1s to 24h' },
        ],
      }),
    ),
    count: Type.Optional(
      int32({
        description:
          'Measurements to take. In a step: the check passes after this many (default 1). In the background: it stops after this many (default: until the rollout ends).',
        minimum: 1,
        maximum: 10000,
      }),
    ),
    failureLimit: Type.Optional(
      int32({ description: 'Failed measurements tolerated; one more fails the check and aborts the rollout. Default 0.', minimum: 0, maximum: 1000 }),
    ),
    inconclusiveLimit: Type.Optional(
      int32({ description: 'Inconclusive measurements tolerated; one more pauses the rollout (rollingUpdate.paused). Default 0.', minimum: 0, maximum: 1000 }),
    ),
    podHealth: Type.Optional(PodHealthSchema),
  },
  {
    description: 'One check: how often it measures, how many measurements it takes and tolerates, and its provider (exactly one).',
    'x-kubernetes-validations': [
      { rule: 'has(self.podHealth)', message: 'each analysis check must set a provider: podHealth', fieldPath: '.podHealth', reason: 'FieldValueRequired' },
    ],
  },
);
export type AnalysisCheck = Static<typeof AnalysisCheckSchema>;

const uniqueNames: CelRule = { rule: 'self.all(a, self.exists_one(b, b.name == a.name))', message: 'analysis check names must be unique' };

export const analysisList = (description: string) =>
  Type.Array(AnalysisCheckSchema, { description, minItems: 1, maxItems: MAX_ANALYSIS_CHECKS, 'x-kubernetes-validations': [uniqueNames] });

export const AnalysisPhase = { running: 'Running', successful: 'Successful', failed: 'Failed', inconclusive: 'Inconclusive' } as const;
export type AnalysisPhase = (typeof AnalysisPhase)[keyof typeof AnalysisPhase];
export const MeasurementPhase = { successful: 'Successful', failed: 'Failed', inconclusive: 'Inconclusive' } as const;
export type MeasurementPhase = (typeof MeasurementPhase)[keyof typeof MeasurementPhase];

export const MeasurementSchema = Type.Object(
  {
    phase: stringEnum([MeasurementPhase.successful, MeasurementPhase.failed, MeasurementPhase.inconclusive], { description: 'What the measurement said.' }),
    value: Type.Optional(Type.String({ description: 'What was measured, as text.', maxLength: 1024 })),
    message: Type.Optional(Type.String({ description: 'Why it failed or was inconclusive.', maxLength: 1024 })),
    measuredAt: dateTime({ description: 'When it was taken.' }),
  },
  { description: 'One measurement of a check.' },
);
export type Measurement = Static<typeof MeasurementSchema>;

const tally = (description: string) => int32({ description, minimum: 0 });

export const AnalysisRunSchema = Type.Object(
  {
    name: Type.String({ description: 'The check.', maxLength: 63 }),
    step: Type.Optional(int32({ description: 'The canary step (index) the check belongs to; absent for a background check.', minimum: 0 })),
    phase: stringEnum([AnalysisPhase.running, AnalysisPhase.successful, AnalysisPhase.failed, AnalysisPhase.inconclusive], {
      description: 'Running until it passed, failed or was inconclusive.',
    }),
    startedAt: dateTime({ description: 'When its first measurement was taken.' }),
    nextMeasurementAt: Type.Optional(dateTime({ description: 'When the next measurement is due, while Running.' })),
    successful: tally('Successful measurements.'),
    failed: tally('Failed measurements.'),
    inconclusive: tally('Inconclusive measurements.'),
    measurements: Type.Array(MeasurementSchema, {
      description: `The last ${MAX_MEASUREMENT_HISTORY} measurements, oldest first.`,
      maxItems: MAX_MEASUREMENT_HISTORY,
    }),
  },
  { description: 'One check of the rollout to status.analysis.revision.' },
);
export type AnalysisRun = Static<typeof AnalysisRunSchema>;

export const AnalysisStatusSchema = Type.Object(
  {
    revision: Type.String({ description: 'The update revision the checks judge.' }),
    runs: Type.Array(AnalysisRunSchema, { description: 'The checks started so far for this revision.', maxItems: 160 }),
  },
  { description: "The analysis of the rollout to this revision: each check's phase and last measurements." },
);
export type AnalysisStatus = Static<typeof AnalysisStatusSchema>;
