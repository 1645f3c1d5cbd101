/**
 * The Prometheus provider: one instant query (`POST /api/v1/query`), its variables filled in, its value
 * judged by the check's conditions (`condition.ts`, `result` being the value). The answer must be one
 * number: a scalar, or a vector of exactly one sample. No data, several series, NaN, an error answer, a
 * request refused by the worker's egress rules, a request error, a timeout or an answer over 1 MiB is
 * inconclusive: the check never fails because the measuring did. Of an error answer only Prometheus's
 * `errorType` (one of its fixed words) is recorded, never its text.
 */
import type { QUERY_VARIABLES } from '../../../../api/analysis.ts';
import { MeasurementPhase, type Measurement, type Prometheus } from '../../../../api/analysis.ts';
import { judge, parseCondition } from './condition.ts';
import { headersOf, requestFailure, type WebDeps } from './web.ts';

export type QueryVariables = Record<(typeof QUERY_VARIABLES)[number], string>;

export const DEFAULT_QUERY_TIMEOUT_SECONDS = 10;

/** The query with each `${NAME}` replaced by its value (names are checked at admission; unknown ones stay). */
export function fillQuery(query: string, vars: QueryVariables): string {
  return query.replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => (Object.hasOwn(vars, name) ? vars[name as keyof QueryVariables] : whole));
}

/** `CANARY_PODS`: the pods' names as an anchored alternation for `=~` (names are DNS labels: nothing to escape). */
export const podsPattern = (names: readonly string[]): string => (names.length > 0 ? names.join('|') : '^$');

interface QueryAnswer {
  status?: unknown;
  errorType?: unknown;
  data?: { resultType?: unknown; result?: unknown };
}

/** Prometheus's words for an error answer and for result types: the only words of an answer a message repeats. */
const ERROR_TYPES = new Set(['bad_data', 'execution', 'timeout', 'canceled', 'internal', 'unavailable', 'not_found', 'not_acceptable']);
const RESULT_TYPES = new Set(['matrix', 'string']);
const known = (words: ReadonlySet<string>, v: unknown): string | undefined => (typeof v === 'string' && words.has(v) ? v : undefined);

/** The one number of the answer, or why there is none. */
export function valueOf(answer: QueryAnswer): number | string {
  if (answer.status !== 'success') {
    const type = known(ERROR_TYPES, answer.errorType);
    return `query error${type ? ` (${type})` : ''}: run the query in Prometheus to see why`;
  }
  const { resultType, result } = answer.data ?? {};
  let sample: unknown;
  if (resultType === 'scalar') sample = result;
  else if (resultType === 'vector' && Array.isArray(result)) {
    if (result.length === 0) return 'the query returned no data';
    if (result.length > 1) return `the query returned ${result.length} series; aggregate it to one (e.g. sum(...))`;
    sample = (result[0] as { value?: unknown } | null)?.value;
  } else return `the query returned a ${known(RESULT_TYPES, resultType) ?? 'result'} (not a scalar or vector)`;
  const value = Array.isArray(sample) ? Number(sample[1]) : NaN;
  return Number.isNaN(value) ? 'the query returned NaN' : value;
}

const inconclusive = (message: string, now: Date): Measurement => ({
  phase: MeasurementPhase.inconclusive,
  message: message.slice(0, 1024),
  measuredAt: now.toISOString(),
});

export async function measurePrometheus(p: Prometheus, namespace: string, vars: QueryVariables, deps: WebDeps, now: () => Date): Promise<Measurement> {
  const success = parseCondition(p.successCondition);
  if ('error' in success) return inconclusive(`successCondition: ${success.error}`, now());
  const failure = p.failureCondition === undefined ? undefined : parseCondition(p.failureCondition);
  if (failure && 'error' in failure) return inconclusive(`failureCondition: ${failure.error}`, now());
  const headers = await headersOf(p.headers, namespace, deps);
  if (typeof headers === 'string') return inconclusive(headers, now());
  const url = `${p.address.replace(/\/+$/, '')}/api/v1/query`;
  let answer: QueryAnswer;
  try {
    const res = await deps.http(
      namespace,
      {
        url,
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ query: fillQuery(p.query, vars) }).toString(),
        timeoutMs: (p.timeoutSeconds ?? DEFAULT_QUERY_TIMEOUT_SECONDS) * 1000,
      },
      deps.signal,
    );
    // Prometheus answers a bad query with 400 and a JSON body saying why.
    answer = JSON.parse(res.text) as QueryAnswer;
    if (answer === null || typeof answer !== 'object') return inconclusive(`${url}: HTTP ${res.status}, the answer is not a Prometheus answer`, now());
  } catch (err) {
    return inconclusive(`${url}: ${err instanceof SyntaxError ? 'the answer is not JSON' : requestFailure(err)}`, now());
  }
  const value = valueOf(answer);
  if (typeof value === 'string') return inconclusive(value, now());
  const verdict = judge(value, success, failure);
  return {
    phase: verdict.phase,
    value: String(value),
    ...(verdict.message === undefined ? {} : { message: verdict.message.slice(0, 1024) }),
    measuredAt: now().toISOString(),
  };
}
