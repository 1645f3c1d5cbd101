/**
 * The Prometheus provider: one instant query (`POST /api/v1/query`), its variables filled in, its value
 * judged by the check's conditions (`condition.ts`, `result` being the value). The answer must be one
 * number: a scalar, or a vector of exactly one sample. No data (an empty vector) or NaN is judged by the
 * check's `onNoData` (`no-data.ts`). Several series, an error answer, a request refused by the worker's egress
 * rules, a request error, a timeout or an answer over 1 MiB is an error: the measurement could not be taken,
 * and the check fails only after `consecutiveErrorLimit` of them in a row. Of an error answer only
 * Prometheus's `errorType` (one of its fixed words) is recorded, never its text.
 */
import type { Measurement, NoData, Prometheus } from '../../../../api/analysis.ts';
import { errorMeasurement, noDataMeasurement } from './no-data.ts';
import { judge, parseCondition } from './condition.ts';
import { headersOf, requestFailure, type WebDeps } from './web.ts';
import type { QueryVariables } from '../../model/analysis-io.ts';

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

/** Why an answer has no number: it has no data (onNoData judges it), or it is not an answer to judge (an error). */
export type NoValue = { noData: string } | { error: string };

/** The one number of the answer, or why there is none. */
export function valueOf(answer: QueryAnswer): number | NoValue {
  if (answer.status !== 'success') {
    const type = known(ERROR_TYPES, answer.errorType);
    return { error: `query error${type ? ` (${type})` : ''}: run the query in Prometheus to see why` };
  }
  const { resultType, result } = answer.data ?? {};
  let sample: unknown;
  if (resultType === 'scalar') sample = result;
  else if (resultType === 'vector' && Array.isArray(result)) {
    if (result.length === 0) return { noData: 'the query returned no data' };
    if (result.length > 1) return { error: `the query returned ${result.length} series; aggregate it to one (e.g. sum(...))` };
    sample = (result[0] as { value?: unknown } | null)?.value;
  } else return { error: `the query returned a ${known(RESULT_TYPES, resultType) ?? 'result'} (not a scalar or vector)` };
  if (!Array.isArray(sample)) return { error: 'the answer has no sample value' };
  const value = Number(sample[1]);
  return Number.isNaN(value) ? { noData: 'the query returned NaN' } : value;
}

/** A check's query with what its no-data measurements count as (the check's `onNoData`). */
export type PrometheusQuery = Prometheus & { onNoData?: NoData | undefined };

/** The answer of the query, or the error measurement of a request that failed. */
async function ask(p: Prometheus, namespace: string, vars: QueryVariables, deps: WebDeps, now: () => Date): Promise<QueryAnswer | Measurement> {
  const headers = await headersOf(p.headers, namespace, deps);
  if (typeof headers === 'string') return errorMeasurement(headers, now());
  const url = `${p.address.replace(/\/+$/, '')}/api/v1/query`;
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
    const answer = JSON.parse(res.text) as QueryAnswer | null;
    if (answer === null || typeof answer !== 'object') return errorMeasurement(`${url}: HTTP ${res.status}, the answer is not a Prometheus answer`, now());
    return answer;
  } catch (err) {
    return errorMeasurement(`${url}: ${err instanceof SyntaxError ? 'the answer is not JSON' : requestFailure(err)}`, now());
  }
}

const isMeasurement = (v: QueryAnswer | Measurement): v is Measurement => 'measuredAt' in v;

export async function measurePrometheus(p: PrometheusQuery, namespace: string, vars: QueryVariables, deps: WebDeps, now: () => Date): Promise<Measurement> {
  const success = parseCondition(p.successCondition);
  if ('error' in success) return errorMeasurement(`successCondition: ${success.error}`, now());
  const failure = p.failureCondition === undefined ? undefined : parseCondition(p.failureCondition);
  if (failure && 'error' in failure) return errorMeasurement(`failureCondition: ${failure.error}`, now());
  const answer = await ask(p, namespace, vars, deps, now);
  if (isMeasurement(answer)) return answer;
  const value = valueOf(answer);
  if (typeof value !== 'number') return 'noData' in value ? noDataMeasurement(p.onNoData, value.noData, now()) : errorMeasurement(value.error, now());
  const verdict = judge(value, success, failure);
  if (verdict.phase === 'NoData') return noDataMeasurement(p.onNoData, verdict.message ?? '', now());
  return {
    phase: verdict.phase,
    value: String(value),
    ...(verdict.message === undefined ? {} : { message: verdict.message.slice(0, 1024) }),
    measuredAt: now().toISOString(),
  };
}
