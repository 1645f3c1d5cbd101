/**
 * Check templates: an analysis check defined once and used by many Apps, as Argo Rollouts' AnalysisTemplate
 * (namespaced: `CheckTemplate`, found only from Apps of its own namespace) and ClusterAnalysisTemplate
 * (`ClusterCheckTemplate`, for platform teams). A template is a check without a name, plus the arguments it
 * declares; an App's check names it with `templateRef` and gives the arguments' values with `args`. The
 * worker reads the template at each reconcile of an App that names one, so an edited template measures from
 * the next measurement on.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  ARG_NAME_PATTERN,
  MAX_ARG_VALUE_LENGTH,
  MAX_TEMPLATE_ARGS,
  PodHealthSchema,
  PROVIDER_COUNT,
  TemplatePrometheusSchema,
  TemplateWebSchema,
  checkLimits,
} from './analysis.ts';
import { ObjectMetaSchema } from './meta.ts';
import { listMap, type CelRule } from './schema-kit.ts';

export const TemplateArgSchema = Type.Object(
  {
    name: Type.String({
      description: 'The argument: ${args.NAME} in the template stands for its value.',
      minLength: 1,
      maxLength: 63,
      pattern: ARG_NAME_PATTERN,
    }),
    value: Type.Optional(
      Type.String({
        description: "Its default value, used when the App's check gives none; without it the App must give one.",
        maxLength: MAX_ARG_VALUE_LENGTH,
      }),
    ),
  },
  { description: 'One argument of the template.' },
);
export type TemplateArg = Static<typeof TemplateArgSchema>;

/** `${args.NAME}` places in `field` (a CEL expression of a string) each name an argument `args` declares. */
const declaredIn = (field: string): string =>
  `${field}.findAll('[$][{]args[.][^}]*[}]').all(v, has(self.args) && self.args.exists(a, '\${args.' + a.name + '}' == v))`;

/**
 * The strings of a template whose arguments admission checks, as CEL expressions guarded by their presence. A
 * web body and header values are too long for CEL's cost budget: the worker checks them (an argument the
 * template does not declare makes the check unresolved).
 */
const ARG_FIELDS: readonly { guard: string; field: string; what: string }[] = [
  { guard: 'has(self.prometheus)', field: 'self.prometheus.query', what: 'prometheus.query' },
  { guard: 'has(self.prometheus)', field: 'self.prometheus.address', what: 'prometheus.address' },
  { guard: 'has(self.web)', field: 'self.web.url', what: 'web.url' },
];

const templateRules: CelRule[] = [
  { rule: `${PROVIDER_COUNT} == 1`, message: 'a check template must set exactly one provider: podHealth, web or prometheus' },
  ...ARG_FIELDS.map(({ guard, field, what }) => ({ rule: `!(${guard}) || ${declaredIn(field)}`, message: `${what} names an argument args does not declare` })),
];

export const CheckTemplateSpecSchema = Type.Object(
  {
    args: Type.Optional(
      listMap(TemplateArgSchema, ['name'], { description: 'The arguments the template takes, each with an optional default.', maxItems: MAX_TEMPLATE_ARGS }),
    ),
    ...checkLimits(),
    podHealth: Type.Optional(PodHealthSchema),
    web: Type.Optional(TemplateWebSchema),
    prometheus: Type.Optional(TemplatePrometheusSchema),
  },
  {
    description:
      "An analysis check without its name (an App's check names it), and the arguments it takes. Its prometheus address and query, web url and body, and header values may name ${args.NAME}. The limits an App's check sets override these.",
    'x-kubernetes-validations': templateRules,
  },
);
export type CheckTemplateSpec = Static<typeof CheckTemplateSpecSchema>;

/** A namespaced CheckTemplate or a ClusterCheckTemplate (the same spec). */
export const CheckTemplateSchema = Type.Object({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: ObjectMetaSchema,
  spec: CheckTemplateSpecSchema,
});
export type CheckTemplate = Static<typeof CheckTemplateSchema>;
