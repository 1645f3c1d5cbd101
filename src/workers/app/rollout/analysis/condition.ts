/**
 * The condition language of the web and Prometheus checks, kept small and safe: one comparison of a value
 * picked from the JSON answer with a literal. No function calls, no loops, nothing evaluated but the path
 * walk and one comparison.
 *
 *   condition := path op literal
 *   path      := `result` | `$` followed by `.name` or `[index]` parts, e.g. `$.data.errors[0].rate`
 *   op        := == | != | < | <= | > | >=
 *   literal   := a number, `true`, `false`, `null`, or a string in single or double quotes
 *
 * `result` is the whole answer (for Prometheus: the query's scalar value). `<` `<=` `>` `>=` compare numbers
 * only (a numeric string, as Prometheus returns samples, counts as its number); `==` and `!=` compare numbers
 * as numbers and anything else as JSON. A path that finds nothing makes the condition unknown, not false.
 */

type Op = '==' | '!=' | '<' | '<=' | '>' | '>=';
type Part = { key: string } | { index: number };

export interface Condition {
  text: string;
  path: Part[];
  op: Op;
  literal: unknown;
}

const SHAPE = /^\s*(result|\$)((?:\.[A-Za-z_][A-Za-z0-9_-]*|\[[0-9]{1,6}\])*)\s*(==|!=|<=|>=|<|>)\s*(.+?)\s*$/;
const PART = /\.([A-Za-z_][A-Za-z0-9_-]*)|\[([0-9]{1,6})\]/g;
const NUMBER = /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/;

function parseLiteral(text: string): { ok: true; value: unknown } | { ok: false } {
  if (NUMBER.test(text)) return { ok: true, value: Number(text) };
  if (text === 'true' || text === 'false') return { ok: true, value: text === 'true' };
  if (text === 'null') return { ok: true, value: null };
  const quoted = /^'([^']*)'$/.exec(text) ?? /^"([^"]*)"$/.exec(text);
  return quoted ? { ok: true, value: quoted[1] } : { ok: false };
}

/** The condition, or an error saying what is wrong with it. */
export function parseCondition(text: string): Condition | { error: string } {
  const m = SHAPE.exec(text);
  if (!m) return { error: `"${text}" is not "<path> <op> <literal>" (e.g. "$.errorRate < 0.05")` };
  const literal = parseLiteral(m[4] ?? '');
  if (!literal.ok) return { error: `"${m[4] ?? ''}" is not a number, true, false, null or a quoted string` };
  const path: Part[] = [...(m[2] ?? '').matchAll(PART)].map((p) => (p[1] !== undefined ? { key: p[1] } : { index: Number(p[2]) }));
  return { text, path, op: m[3] as Op, literal: literal.value };
}

/** What `path` finds in `doc`, or undefined when it finds nothing. */
export function pick(doc: unknown, path: readonly Part[]): unknown {
  let at: unknown = doc;
  for (const part of path) {
    if ('key' in part) {
      if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, part.key)) return undefined;
      at = (at as Record<string, unknown>)[part.key];
    } else {
      if (!Array.isArray(at) || part.index >= at.length) return undefined;
      at = at[part.index];
    }
  }
  return at;
}

const asNumber = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined;

/** true or false, or undefined when the path finds nothing or an ordering compares a non-number. */
export function evaluate(c: Condition, doc: unknown): { value: unknown; holds: boolean | undefined } {
  const value = pick(doc, c.path);
  if (value === undefined) return { value, holds: undefined };
  const a = asNumber(value);
  const b = asNumber(c.literal);
  if (c.op === '==' || c.op === '!=') {
    const same = a !== undefined && b !== undefined && typeof c.literal === 'number' ? a === b : JSON.stringify(value) === JSON.stringify(c.literal);
    return { value, holds: c.op === '==' ? same : !same };
  }
  if (a === undefined || b === undefined || Number.isNaN(a)) return { value, holds: undefined };
  const holds = c.op === '<' ? a < b : c.op === '<=' ? a <= b : c.op === '>' ? a > b : a >= b;
  return { value, holds };
}

export interface Verdict {
  /** NoData: the success condition's path found nothing (and so did the failure condition's). */
  phase: 'Successful' | 'Failed' | 'Inconclusive' | 'NoData';
  /** What the success condition found (`describe`). */
  value: string | undefined;
  message: string | undefined;
}

/**
 * What a found value is, as status and Events may show it: a number, a boolean or null as itself; a string,
 * an array or an object only by its kind and size. An answer is the destination's data: the tenant who wrote
 * the check chose where it points, not what it may read there, so only what a condition judges is repeated.
 */
export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return String(v);
  if (typeof v === 'string') return `a string of ${v.length} characters`;
  if (Array.isArray(v)) return `an array of ${v.length} items`;
  return typeof v === 'object' ? 'an object' : 'a value';
}

/**
 * A measured answer judged by its conditions: successful when `success` holds; failed when `failure` holds
 * (or, without a failure condition, when `success` is false); no data when the paths find nothing;
 * inconclusive otherwise (neither condition holds, or an ordering met a value that is not a number).
 */
export function judge(doc: unknown, success: Condition, failure: Condition | undefined): Verdict {
  const ok = evaluate(success, doc);
  const value = ok.value === undefined ? undefined : describe(ok.value);
  if (ok.holds === true) return { phase: 'Successful', value, message: undefined };
  if (failure) {
    const bad = evaluate(failure, doc);
    if (bad.holds === true) return { phase: 'Failed', value: value ?? describe(bad.value), message: `${failure.text} holds (${describe(bad.value)})` };
    if (ok.value === undefined && bad.value === undefined) return { phase: 'NoData', value, message: `the answer has nothing at the conditions' paths` };
    return { phase: 'Inconclusive', value, message: `neither ${success.text} nor ${failure.text} holds (${describe(ok.value)})` };
  }
  if (ok.holds === false) return { phase: 'Failed', value, message: `${success.text} does not hold (${describe(ok.value)})` };
  if (ok.value === undefined) return { phase: 'NoData', value, message: `the answer has nothing at the path of ${success.text}` };
  return { phase: 'Inconclusive', value, message: `${success.text}: the answer has ${describe(ok.value)} there` };
}
