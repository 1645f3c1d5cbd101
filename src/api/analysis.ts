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
import { dateTime, dnsLabel, int32, stringEnum, type CelRule } from './schema-kit.ts';

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

export const PodHealthSchema = Type.Object(
  {
    maxRestarts: Type.Optional(int32({ description: 'Most restarts an updated pod may have (all containers). Default 2.', minimum: 0, maximum: 1000 })),
    maxNotReadySeconds: Type.Optional(
      int32({
        description: 'Seconds an updated pod may stay not ready, readiness gates included. Default 300.',
        minimum: 1,
        maximum: 86400,
      }),
    ),
    allowCrashLoop: Type.Optional(Type.Boolean({ description: 'CrashLoopBackOff alone does not fail the measurement. Default false.' })),
  },
  {
    description:
      "Built in, needing nothing: the updated pods' health. A measurement fails when an updated pod crash-loops, restarted more than maxRestarts times since it reached the update revision (the restarts an in-place update gives it excluded), or stayed not ready (or with a readiness gate not True) longer than maxNotReadySeconds; while no pod runs the update revision it has no data (the check's onNoData).",
  },
);
export type PodHealth = Static<typeof PodHealthSchema>;

/** `<path> <op> <literal>`: the condition grammar (src/workers/app/rollout/analysis/condition.ts states it). */
export const CONDITION_PATTERN =
  '^\\s*(result|\\$)(\\.[A-Za-z_][A-Za-z0-9_-]*|\\[[0-9]{1,6}\\])*\\s*(==|!=|<=|>=|<|>)\\s*(-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?|true|false|null|\'[^\']*\'|"[^"]*")\\s*$';

const condition = (description: string) => Type.String({ description, minLength: 1, maxLength: 512, pattern: CONDITION_PATTERN });

export const SecretKeySelectorSchema = Type.Object(
  {
    name: dnsLabel('The Secret, in the App namespace.', { maxLength: 253 }),
    key: Type.String({ description: 'The key of the Secret whose value is used.', minLength: 1, maxLength: 253 }),
  },
  { description: 'A value from a Secret in the App namespace (the worker must be granted get on it).' },
);

export const HeaderSchema = Type.Object(
  {
    name: Type.String({ description: 'Header name.', minLength: 1, maxLength: 128, pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$" }),
    value: Type.Optional(Type.String({ description: 'Literal value.', maxLength: 4096 })),
    valueFrom: Type.Optional(Type.Object({ secretKeyRef: SecretKeySelectorSchema }, { description: 'The value from a Secret.' })),
  },
  {
    description: 'One request header: a literal value or one from a Secret.',
    'x-kubernetes-validations': [{ rule: 'has(self.value) != has(self.valueFrom)', message: 'a header sets exactly one of value or valueFrom' }],
  },
);
export type Header = Static<typeof HeaderSchema>;

export const WebSchema = Type.Object(
  {
    url: Type.String({
      description: 'http(s) URL answering JSON.',
      minLength: 1,
      maxLength: 2048,
      'x-kubernetes-validations': [{ rule: "self.matches('^https?://[^\\\\s/]+')", message: 'url must be an http:// or https:// URL' }],
    }),
    method: Type.Optional(stringEnum(['GET', 'POST'], { description: 'GET (default) or POST.' })),
    body: Type.Optional(Type.String({ description: 'The request body of a POST (sent as application/json).', maxLength: 16384 })),
    headers: Type.Optional(Type.Array(HeaderSchema, { description: 'Request headers.', maxItems: 8 })),
    timeoutSeconds: Type.Optional(int32({ description: 'Request timeout in seconds (then an error). Default 10.', minimum: 1, maximum: 60 })),
    successCondition: condition('When this holds of the answer, the measurement is successful, e.g. `$.errorRate < 0.05`.'),
    failureCondition: Type.Optional(
      condition('When this holds, the measurement failed. Without it, a successCondition that is false fails; with it, neither holding is inconclusive.'),
    ),
  },
  {
    description:
      'An HTTP GET or POST answering JSON, judged by a condition: `<path> <op> <literal>` with a path like `$.data.rate` or `$.items[0].ok`, op one of == != < <= > >=, and a number, true, false, null or quoted string. A request error, a timeout, a status other than 2xx, or an answer that is not JSON is an error; a path that finds nothing is no data (onNoData).',
    'x-kubernetes-validations': [
      { rule: "!has(self.body) || (has(self.method) && self.method == 'POST')", message: 'body requires method POST', fieldPath: '.body' },
    ],
  },
);
export type Web = Static<typeof WebSchema>;

/** Variables a Prometheus query may name; the worker puts in their values. */
export const QUERY_VARIABLES = ['APP', 'NAMESPACE', 'REVISION', 'STABLE_REVISION', 'CANARY_PODS'] as const;

export const PrometheusSchema = Type.Object(
  {
    address: Type.String({
      description: 'The Prometheus server, e.g. http://prometheus.monitoring:9090.',
      minLength: 1,
      maxLength: 2048,
      'x-kubernetes-validations': [{ rule: "self.matches('^https?://[^\\\\s/]+')", message: 'address must be an http:// or https:// URL' }],
    }),
    query: Type.String({
      description:
        "An instant PromQL query answering one number (a scalar or a vector of one sample). It may name ${APP}, ${NAMESPACE}, ${REVISION} (the update revision: pods carry it in their labels apps.ebb.dev/revision and controller-revision-hash, so a selector on it keeps only the update revision's series), ${STABLE_REVISION} and ${CANARY_PODS} (the names of the pods at the update revision now, as a regular expression for =~; names outlive revisions, so over a range it also selects their earlier samples).",
      minLength: 1,
      maxLength: 4096,
      'x-kubernetes-validations': [
        {
          rule: `self.findAll('[$][{][^}]*[}]').all(v, v in [${QUERY_VARIABLES.map((v) => `'\${${v}}'`).join(', ')}])`,
          message: `query names a variable other than ${QUERY_VARIABLES.map((v) => `\${${v}}`).join(', ')}`,
        },
        {
          rule: "self.findAll('[(]').size() == self.findAll('[)]').size() && self.findAll('[{]').size() == self.findAll('[}]').size() && self.findAll('\\\\[').size() == self.findAll('\\\\]').size()",
          message: 'query has unbalanced parentheses, braces or brackets',
        },
      ],
    }),
    headers: Type.Optional(Type.Array(HeaderSchema, { description: 'Request headers (e.g. Authorization).', maxItems: 8 })),
    timeoutSeconds: Type.Optional(int32({ description: 'Query timeout in seconds (then an error). Default 10.', minimum: 1, maximum: 60 })),
    successCondition: condition('When this holds of the value (`result`), the measurement is successful, e.g. `result < 0.05`.'),
    failureCondition: Type.Optional(condition('When this holds, the measurement failed; without it, a false successCondition fails.')),
  },
  {
    description:
      'A PromQL query judged like a web answer, `result` being its value. No data (an empty vector) or NaN is judged by onNoData; several series, an error answer or a request that fails is an error.',
  },
);
export type Prometheus = Static<typeof PrometheusSchema>;

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
        default: DEFAULT_CONSECUTIVE_ERROR_LIMIT,
      }),
    ),
    onNoData: Type.Optional(
      stringEnum([NoData.error, NoData.inconclusive, NoData.successful, NoData.failed], {
        description:
          "What a measurement that found no data counts as (Prometheus: an empty result or NaN; web: nothing at the condition's path). Error (default): tolerated up to consecutiveErrorLimit in a row, as a provider that cannot answer yet; Inconclusive: pauses past inconclusiveLimit; Successful: no data means nothing bad happened (e.g. an error count); Failed.",
        default: DEFAULT_ON_NO_DATA,
      }),
    ),
    dryRun: Type.Optional(
      Type.Boolean({
        description:
          'Measure and record only: the check never pauses, aborts or holds the rollout (a step waits for it to end, whatever its result). Default false.',
      }),
    ),
    podHealth: Type.Optional(PodHealthSchema),
    web: Type.Optional(WebSchema),
    prometheus: Type.Optional(PrometheusSchema),
  },
  {
    description: 'One check: how often it measures, how many measurements it takes and tolerates, and its provider (exactly one).',
    'x-kubernetes-validations': [
      {
        rule: '(has(self.podHealth) ? 1 : 0) + (has(self.web) ? 1 : 0) + (has(self.prometheus) ? 1 : 0) == 1',
        message: 'each analysis check must set exactly one provider: podHealth, web or prometheus',
      },
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
