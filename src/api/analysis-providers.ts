/**
 * The providers of an analysis check (what a measurement asks): podHealth, web and Prometheus. The web and
 * Prometheus providers come in two forms: an App's inline check, and a check template's, whose url, body,
 * address, query and header values may also name `${args.NAME}` (the template's arguments, filled in by the
 * worker before it measures).
 */
import { Type, type Static } from '@sinclair/typebox';
import { dnsLabel, int32, stringEnum, type CelRule } from './schema-kit.ts';

/** `${args.NAME}`: a template argument's place in a string. */
export const ARG_REFERENCE = /\$\{args\.([A-Za-z_][A-Za-z0-9_-]*)\}/g;
/** An argument name (as Argo Rollouts' args: letters, digits, `_` and `-`). */
export const ARG_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_-]*$';

/** An inline url must start as an http(s) URL; a template's may also start with an argument (checked again once filled in). */
function urlRule(field: string, templated: boolean): CelRule {
  const url = "self.matches('^https?://[^\\\\s/]+')";
  return templated
    ? {
        rule: `${url} || self.matches('^[$][{]args[.][A-Za-z_][A-Za-z0-9_-]*[}]')`,
        message: `${field} must be an http:// or https:// URL, or start with \${args.NAME}`,
      }
    : { rule: url, message: `${field} must be an http:// or https:// URL` };
}

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

const webSchema = (templated: boolean) =>
  Type.Object(
    {
      url: Type.String({
        description: templated ? 'http(s) URL answering JSON; it may name ${args.NAME}.' : 'http(s) URL answering JSON.',
        minLength: 1,
        maxLength: 2048,
        'x-kubernetes-validations': [urlRule('url', templated)],
      }),
      method: Type.Optional(stringEnum(['GET', 'POST'], { description: 'GET (default) or POST.' })),
      body: Type.Optional(
        Type.String({
          description: `The request body of a POST (sent as application/json)${templated ? '; it may name ${args.NAME}' : ''}.`,
          maxLength: 16384,
        }),
      ),
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
export const WebSchema = webSchema(false);
/** A check template's web provider: its url, body and header values may name `${args.NAME}`. */
export const TemplateWebSchema = webSchema(true);
export type Web = Static<typeof WebSchema>;

/** Variables a Prometheus query may name; the worker puts in their values. */
export const QUERY_VARIABLES = ['APP', 'NAMESPACE', 'REVISION', 'STABLE_REVISION', 'CANARY_PODS'] as const;

/** A query names only the variables above (and, in a template, `${args.NAME}`: the template's own rule checks the name is declared). */
function queryVariablesRule(templated: boolean): CelRule {
  const known = `v in [${QUERY_VARIABLES.map((v) => `'\${${v}}'`).join(', ')}]`;
  const names = QUERY_VARIABLES.map((v) => `\${${v}}`).join(', ');
  return templated
    ? {
        rule: `self.findAll('[$][{][^}]*[}]').all(v, ${known} || v.startsWith('\${args.'))`,
        message: `query names a variable other than ${names} or \${args.NAME}`,
      }
    : { rule: `self.findAll('[$][{][^}]*[}]').all(v, ${known})`, message: `query names a variable other than ${names}` };
}

const prometheusSchema = (templated: boolean) =>
  Type.Object(
    {
      address: Type.String({
        description: `The Prometheus server, e.g. http://prometheus.monitoring:9090${templated ? '; it may name ${args.NAME}' : ''}.`,
        minLength: 1,
        maxLength: 2048,
        'x-kubernetes-validations': [urlRule('address', templated)],
      }),
      query: Type.String({
        description:
          `${templated ? 'It may name ${args.NAME} (an argument of the template). ' : ''}` +
          "An instant PromQL query answering one number (a scalar or a vector of one sample). It may name ${APP}, ${NAMESPACE}, ${REVISION} (the update revision: pods carry it in their labels apps.ebb.dev/revision and controller-revision-hash, so a selector on it keeps only the update revision's series), ${STABLE_REVISION} and ${CANARY_PODS} (the names of the pods at the update revision now, as a regular expression for =~; names outlive revisions, so over a range it also selects their earlier samples).",
        minLength: 1,
        maxLength: 4096,
        'x-kubernetes-validations': [
          queryVariablesRule(templated),
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
export const PrometheusSchema = prometheusSchema(false);
/** A check template's Prometheus provider: its address, query and header values may name `${args.NAME}`. */
export const TemplatePrometheusSchema = prometheusSchema(true);
export type Prometheus = Static<typeof PrometheusSchema>;
