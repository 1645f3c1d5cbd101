/**
 * Analysis: checks that judge the update revision while it rolls out, defined once in
 * `rollingUpdate.analysis.checks` and named by canary steps and `background`. A canary step `analysis` runs
 * the checks it names and then goes on (every one passed), pauses (one was inconclusive) or aborts the rollout
 * (one failed); `analysis.background` runs from the first updated pod to the end of the rollout.
 *
 * Each check measures every `interval` (on timers, never a polling loop), the first `initialDelay` after it
 * starts, and records its measurements in `status.analysis` (the last ten of each check). It passes after
 * `count` measurements with at most `failureLimit` failed and `inconclusiveLimit` inconclusive ones; one more
 * failure fails it. A measurement that could not be taken is an error, retried sooner; more than
 * `consecutiveErrorLimit` in a row fail the check. A `dryRun` check measures and records, and never acts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { dateTime, dnsLabel, int32, listMap, stringEnum, type CelRule } from './schema-kit.ts';
import { ARG_NAME_PATTERN, PodHealthSchema, PrometheusSchema, WebSchema } from './analysis-providers.ts';

export {
  ARG_NAME_PATTERN,
  ARG_REFERENCE,
  CONDITION_PATTERN,
  HeaderSchema,
  PodHealthSchema,
  PrometheusSchema,
  QUERY_VARIABLES,
  SecretKeySelectorSchema,
  TemplatePrometheusSchema,
  TemplateWebSchema,
  WebSchema,
  type Header,
  type PodHealth,
  type Prometheus,
  type Web,
} from './analysis-providers.ts';

/** The two kinds of check template (`check-template.ts`). */
export const CheckTemplateKind = { namespaced: 'CheckTemplate', cluster: 'ClusterCheckTemplate' } as const;
export type CheckTemplateKind = (typeof CheckTemplateKind)[keyof typeof CheckTemplateKind];
const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** A Go-style duration (same grammar as canary pauses). */
const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';
export const MAX_ANALYSIS_CHECKS = 4;
export const MAX_MEASUREMENT_HISTORY = 10;
export const DEFAULT_ANALYSIS_INTERVAL = '30s';
/** Errors in a row a check tolerates (as Argo Rollouts' default): the fifth aborts. */
export const DEFAULT_CONSECUTIVE_ERROR_LIMIT = 4;

/** What a measurement that found no data (an empty result, NaN, nothing at the path) counts as. */
export const NoData = { error: 'Error', inconclusive: 'Inconclusive', successful: 'Successful', failed: 'Failed' } as const;
export type NoData = (typeof NoData)[keyof typeof NoData];
export const DEFAULT_ON_NO_DATA: NoData = NoData.error;

/**
 * How a check measures and judges, apart from its provider: an inline check's and a check template's. None of
 * these has a schema default, so a template's value holds wherever the App's inline check leaves one unset.
 */
export const checkLimits = () => ({
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
  initialDelay: Type.Optional(
    Type.String({
      description: 'Time from the start of the check to its first measurement, up to 24h (e.g. for metrics to be scraped). Default 0s.',
      maxLength: 32,
      pattern: DURATION_PATTERN,
      'x-kubernetes-validations': [{ rule: "duration(self) <= duration('24h')", message: 'initialDelay must be at most 24h' }],
    }),
  ),
  failureLimit: Type.Optional(int32({ description: 'Failed measurements tolerated; one more aborts the rollout. Default 0.', minimum: 0, maximum: 1000 })),
  inconclusiveLimit: Type.Optional(
    int32({ description: 'Inconclusive measurements tolerated; one more pauses the rollout. Default 0.', minimum: 0, maximum: 1000 }),
  ),
  consecutiveErrorLimit: Type.Optional(
    int32({
      description: `Measurement errors in a row tolerated (the measurement could not be taken: unreachable, refused, timeout, bad answer); one more aborts the rollout. An error neither pauses nor counts toward count; the next measurement is taken after 10s (or interval, if shorter). Default ${DEFAULT_CONSECUTIVE_ERROR_LIMIT}.`,
      minimum: 0,
      maximum: 1000,
    }),
  ),
  onNoData: Type.Optional(
    stringEnum([NoData.error, NoData.inconclusive, NoData.successful, NoData.failed], {
      description:
        "What a measurement that found no data counts as (Prometheus: an empty result or NaN; web: nothing at the condition's path). Error (default): tolerated up to consecutiveErrorLimit in a row, as a provider that cannot answer yet; Inconclusive: pauses past inconclusiveLimit; Successful: no data means nothing bad happened (e.g. an error count); Failed.",
    }),
  ),
  dryRun: Type.Optional(
    Type.Boolean({
      description:
        'Measure and record only: the check never pauses, aborts or holds the rollout (a step waits for it to end, whatever its result). Default false.',
    }),
  ),
});

/** The number of providers a check or template sets (exactly one is allowed). */
export const PROVIDER_COUNT = '(has(self.podHealth) ? 1 : 0) + (has(self.web) ? 1 : 0) + (has(self.prometheus) ? 1 : 0)';

export const MAX_TEMPLATE_ARGS = 10;
export const MAX_ARG_VALUE_LENGTH = 1024;

export const TemplateRefSchema = Type.Object(
  {
    name: Type.String({ description: 'The template.', minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN_PATTERN }),
    kind: Type.Optional(
      stringEnum([CheckTemplateKind.namespaced, CheckTemplateKind.cluster], {
        description: "CheckTemplate (default): the one of that name in the App's own namespace; ClusterCheckTemplate: the cluster-wide one.",
      }),
    ),
  },
  { description: "The check template this check measures with: a CheckTemplate in the App's namespace (no other), or a ClusterCheckTemplate." },
);
export type TemplateRef = Static<typeof TemplateRefSchema>;

export const ArgValueSchema = Type.Object(
  {
    name: Type.String({ description: 'The argument, as the template declares it.', minLength: 1, maxLength: 63, pattern: ARG_NAME_PATTERN }),
    value: Type.String({ description: 'Its value, put in for ${args.NAME}.', maxLength: MAX_ARG_VALUE_LENGTH }),
  },
  { description: 'One argument of the template.' },
);
export type ArgValue = Static<typeof ArgValueSchema>;

export const AnalysisCheckSchema = Type.Object(
  {
    name: dnsLabel('The check, unique in its list; status and Events name it.'),
    ...checkLimits(),
    podHealth: Type.Optional(PodHealthSchema),
    web: Type.Optional(WebSchema),
    prometheus: Type.Optional(PrometheusSchema),
    templateRef: Type.Optional(TemplateRefSchema),
    args: Type.Optional(
      listMap(ArgValueSchema, ['name'], {
        description: "Arguments of templateRef's template; one it declares without a default must be given here.",
        maxItems: MAX_TEMPLATE_ARGS,
      }),
    ),
  },
  {
    description:
      "One check: how often it measures, how many measurements it takes and tolerates, and its provider (exactly one), or instead a templateRef to a check template that defines them; then the limits set here (interval, count, initialDelay, failureLimit, inconclusiveLimit, consecutiveErrorLimit, onNoData, dryRun) override the template's.",
    'x-kubernetes-validations': [
      {
        rule: `${PROVIDER_COUNT} + (has(self.templateRef) ? 1 : 0) == 1`,
        message: 'each analysis check must set exactly one provider (podHealth, web or prometheus) or a templateRef',
      },
      { rule: '!has(self.args) || has(self.templateRef)', message: 'args require a templateRef', fieldPath: '.args' },
    ],
  },
);
export type AnalysisCheck = Static<typeof AnalysisCheckSchema>;

export const MAX_ANALYSIS_CHECKS_DEFINED = 8;

const checkName = () => Type.String({ minLength: 1, maxLength: 63 });

/** The names of checks in `rollingUpdate.analysis.checks`. */
export const checkNames = (description: string) => Type.Array(checkName(), { description, minItems: 1, maxItems: MAX_ANALYSIS_CHECKS });

export const AnalysisSchema = Type.Object(
  {
    checks: Type.Array(AnalysisCheckSchema, {
      description: 'The checks, each defined once; canary analysis steps and background name them.',
      minItems: 1,
      maxItems: MAX_ANALYSIS_CHECKS_DEFINED,
      'x-kubernetes-validations': [{ rule: 'self.all(a, self.exists_one(b, b.name == a.name))', message: 'analysis check names must be unique' }],
    }),
    background: Type.Optional(
      checkNames('Checks that run from the first pod at the update revision to the end of the rollout; one failing aborts it, one inconclusive pauses it.'),
    ),
  },
  { description: 'Analysis of a rollout (see canary steps `analysis`).' },
);
export type Analysis = Static<typeof AnalysisSchema>;

/** rollingUpdate rules: every name a step or `background` gives is a defined check. */
export const analysisNameRules: CelRule[] = [
  {
    rule: '!has(self.analysis) || !has(self.analysis.background) || self.analysis.background.all(n, self.analysis.checks.exists(c, c.name == n))',
    message: 'analysis.background names a check analysis.checks does not define',
    fieldPath: '.analysis.background',
  },
  {
    rule: '!has(self.canary) || self.canary.steps.all(s, !has(s.analysis) || (has(self.analysis) && s.analysis.all(n, self.analysis.checks.exists(c, c.name == n))))',
    message: 'a canary analysis step names a check analysis.checks does not define',
    fieldPath: '.canary.steps',
  },
];

export const AnalysisPhase = { running: 'Running', successful: 'Successful', failed: 'Failed', inconclusive: 'Inconclusive', error: 'Error' } as const;
export type AnalysisPhase = (typeof AnalysisPhase)[keyof typeof AnalysisPhase];
export const MeasurementPhase = { successful: 'Successful', failed: 'Failed', inconclusive: 'Inconclusive', error: 'Error' } as const;
export type MeasurementPhase = (typeof MeasurementPhase)[keyof typeof MeasurementPhase];

export const MeasurementSchema = Type.Object(
  {
    phase: stringEnum([MeasurementPhase.successful, MeasurementPhase.failed, MeasurementPhase.inconclusive, MeasurementPhase.error], {
      description: 'What the measurement said; Error: it could not be taken.',
    }),
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
    phase: stringEnum([AnalysisPhase.running, AnalysisPhase.successful, AnalysisPhase.failed, AnalysisPhase.inconclusive, AnalysisPhase.error], {
      description: 'Running until it passed, failed, was inconclusive, or ended in errors (more than consecutiveErrorLimit in a row).',
    }),
    dryRun: Type.Optional(Type.Boolean({ description: 'A dry-run check: its phase never acts on the rollout.' })),
    startedAt: dateTime({ description: 'When its first measurement was taken.' }),
    nextMeasurementAt: Type.Optional(dateTime({ description: 'When the next measurement is due, while Running.' })),
    successful: tally('Successful measurements.'),
    failed: tally('Failed measurements.'),
    inconclusive: tally('Inconclusive measurements.'),
    errors: Type.Optional(tally('Measurements that could not be taken.')),
    consecutiveErrors: Type.Optional(tally('Errors since the last measurement that was taken.')),
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
