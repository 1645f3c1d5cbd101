/**
 * Check templates made concrete (pure): an App's check that names a template (`templateRef`) becomes the
 * template's check with its arguments filled in (`${args.NAME}`: the App's value, else the template's default)
 * and the limits the App's check sets laid over the template's. A check that cannot be made concrete (its
 * template is missing or unreadable, an argument has no value, the App gives one the template does not declare)
 * is `unresolved`: it measures as an error with that message each time it is due, so its
 * consecutiveErrorLimit decides, as for a provider that cannot answer, and every such measurement is a Warning
 * Event naming the template.
 */
import {
  ARG_REFERENCE,
  CheckTemplateKind,
  type AnalysisCheck,
  type ArgValue,
  type Header,
  type Prometheus,
  type TemplateRef,
  type Web,
} from '../../../../api/analysis.ts';
import type { CheckTemplateSpec } from '../../../../api/check-template.ts';
import type { ResolvedCheck } from '../../model/analysis-io.ts';

/** What reading a template found: its spec, or why there is none (a sentence naming it). */
export type TemplateLookup = { spec: CheckTemplateSpec } | { missing: string };

const kindOf = (ref: TemplateRef): CheckTemplateKind => ref.kind ?? CheckTemplateKind.namespaced;

/** The key a template is looked up by. */
export const templateKey = (ref: TemplateRef): string => `${kindOf(ref)}/${ref.name}`;

/** How messages name a template: `CheckTemplate "rate"`. */
export const templateName = (ref: TemplateRef): string => `${kindOf(ref)} "${ref.name}"`;

/** The templates `checks` name, once each. */
export function referencedTemplates(checks: readonly AnalysisCheck[]): TemplateRef[] {
  const refs = new Map<string, TemplateRef>();
  for (const c of checks) if (c.templateRef) refs.set(templateKey(c.templateRef), c.templateRef);
  return [...refs.values()];
}

/** The fields an App's check may set over its template's. */
const LIMITS = ['interval', 'count', 'initialDelay', 'failureLimit', 'inconclusiveLimit', 'consecutiveErrorLimit', 'onNoData', 'dryRun'] as const;

type Limits = Pick<AnalysisCheck, (typeof LIMITS)[number]>;

function limitsOf(check: Limits): Limits {
  const out: Record<string, unknown> = {};
  for (const k of LIMITS) if (check[k] !== undefined) out[k] = check[k];
  return out;
}

const URL_START = /^https?:\/\/[^\s/]+/;

/** `text` with each `${args.NAME}` replaced by its value (every name has one: `argValues` checked it). */
export const fillArgs = (text: string, values: ReadonlyMap<string, string>): string =>
  text.replace(ARG_REFERENCE, (whole, name: string) => values.get(name) ?? whole);

/** The value of each argument the template declares, or why one is missing or not declared. */
export function argValues(spec: CheckTemplateSpec, given: readonly ArgValue[] | undefined, what: string): Map<string, string> | string {
  const declared = new Map((spec.args ?? []).map((a) => [a.name, a.value]));
  const undeclared = (given ?? []).find((a) => !declared.has(a.name));
  if (undeclared) return `${what} declares no argument "${undeclared.name}"`;
  const values = new Map<string, string>();
  for (const [name, fallback] of declared) {
    const value = given?.find((a) => a.name === name)?.value ?? fallback;
    if (value === undefined) return `${what}: argument "${name}" has no value (the App's check gives none and the template no default)`;
    values.set(name, value);
  }
  return values;
}

const fillHeaders = (headers: readonly Header[] | undefined, values: ReadonlyMap<string, string>): Header[] | undefined =>
  headers?.map((h) => (h.value === undefined ? h : { ...h, value: fillArgs(h.value, values) }));

function fillWeb(web: Web, values: ReadonlyMap<string, string>): Web {
  const headers = fillHeaders(web.headers, values);
  return { ...web, url: fillArgs(web.url, values), ...(web.body === undefined ? {} : { body: fillArgs(web.body, values) }), ...(headers ? { headers } : {}) };
}

function fillPrometheus(p: Prometheus, values: ReadonlyMap<string, string>): Prometheus {
  const headers = fillHeaders(p.headers, values);
  return { ...p, address: fillArgs(p.address, values), query: fillArgs(p.query, values), ...(headers ? { headers } : {}) };
}

/** Every string of the template that may name arguments. */
const argStrings = ({ web, prometheus }: CheckTemplateSpec): string[] =>
  [web?.url, web?.body, prometheus?.address, prometheus?.query, ...[...(web?.headers ?? []), ...(prometheus?.headers ?? [])].map((h) => h.value)].filter(
    (s) => s !== undefined,
  );

/** An argument the template names and does not declare (admission checks the url, address and query; not the body or headers). */
const undeclaredArg = (spec: CheckTemplateSpec, values: ReadonlyMap<string, string>): string | undefined =>
  argStrings(spec)
    .flatMap((s) => [...s.matchAll(ARG_REFERENCE)].map((m) => m[1] ?? ''))
    .find((name) => !values.has(name));

/** The template's check with its arguments filled in, or why it cannot be (an argument made the URL no http(s) URL). */
function concrete(spec: CheckTemplateSpec, values: ReadonlyMap<string, string>, what: string): Omit<AnalysisCheck, 'name'> | string {
  const undeclared = undeclaredArg(spec, values);
  if (undeclared !== undefined) return `${what} names \${args.${undeclared}}, an argument it does not declare`;
  const { args: _declared, web, prometheus, ...rest } = spec;
  const filled: Omit<AnalysisCheck, 'name'> = {
    ...rest,
    ...(web ? { web: fillWeb(web, values) } : {}),
    ...(prometheus ? { prometheus: fillPrometheus(prometheus, values) } : {}),
  };
  const url = filled.web?.url ?? filled.prometheus?.address;
  if (url !== undefined && !URL_START.test(url))
    return `${what}: with its arguments filled in, ${filled.web ? 'web.url' : 'prometheus.address'} is not an http:// or https:// URL`;
  return filled;
}

/** One App check made concrete with the templates read (`templates`, by `templateKey`). */
export function resolveCheck(check: AnalysisCheck, templates: ReadonlyMap<string, TemplateLookup>): ResolvedCheck {
  const ref = check.templateRef;
  if (!ref) return check;
  const { templateRef: _ref, args, name, ...own } = check;
  const what = templateName(ref);
  const unresolved = (message: string): ResolvedCheck => ({ name, ...limitsOf(own), unresolved: message });
  const found = templates.get(templateKey(ref)) ?? { missing: `${what} was not read` };
  if ('missing' in found) return unresolved(found.missing);
  const values = argValues(found.spec, args, what);
  if (typeof values === 'string') return unresolved(values);
  const body = concrete(found.spec, values, what);
  if (typeof body === 'string') return unresolved(body);
  return { ...body, ...limitsOf(own), name };
}

/** The App's checks made concrete. */
export const resolveChecks = (checks: readonly AnalysisCheck[], templates: ReadonlyMap<string, TemplateLookup>): ResolvedCheck[] =>
  checks.map((c) => resolveCheck(c, templates));
