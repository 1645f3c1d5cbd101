/**
 * The web provider: one HTTP GET or POST whose JSON answer is judged by the check's conditions
 * (`condition.ts`). Header values may come from a Secret, always in the App's namespace (a check cannot
 * name another); the worker reads it only if it was granted `get` on it. The request goes through the
 * worker's egress rules (`workers/egress`: allowed hosts, refused addresses and headers, no redirects, the
 * answer capped at 1 MiB). A refused request, a request error, a timeout, a status other than 2xx, an
 * answer too large or not JSON, or a Secret that cannot be read is an error (the measurement could not be
 * taken: the check fails only after `consecutiveErrorLimit` of them in a row, never because the measuring
 * did once); an answer with nothing at the condition's path is no data (`onNoData`). Nothing of the answer
 * but the judged value (a number or a boolean) and the kind of what was found is recorded.
 */
import type { Header, Measurement, NoData, Web } from '../../../../api/analysis.ts';
import { errorMeasurement, noDataMeasurement } from './no-data.ts';
import { isKubeError } from '../../../../kube/errors.ts';
import type { CheckHttp } from '../../../egress/outbound.ts';
import { isEgressError } from '../../../egress/errors.ts';
import { judge, parseCondition, type Condition } from './condition.ts';
import type { SecretValue } from '../../model/analysis-io.ts';

export interface WebDeps {
  secretValue: SecretValue | undefined;
  /** The worker's check requests (allowed hosts and addresses, capped answers). */
  http: CheckHttp;
  signal: AbortSignal;
}

export const DEFAULT_WEB_TIMEOUT_SECONDS = 10;

/** What a measurement says of a failed request: ebb's own words for a refusal, never a client's message. */
export const requestFailure = (err: unknown): string => (isEgressError(err) ? err.message : 'request failed');

/** The request headers, values from Secrets read; or why they could not be. */
export async function headersOf(list: readonly Header[] | undefined, namespace: string, deps: WebDeps): Promise<Record<string, string> | string> {
  const headers: Record<string, string> = {};
  for (const h of list ?? []) {
    if (h.value !== undefined) {
      headers[h.name] = h.value;
      continue;
    }
    const ref = h.valueFrom?.secretKeyRef;
    if (!ref) continue;
    if (!deps.secretValue) return `header ${h.name}: this worker reads no Secrets`;
    let value: string | undefined;
    try {
      value = await deps.secretValue(namespace, ref.name, ref.key);
    } catch (err) {
      return `header ${h.name}: Secret ${namespace}/${ref.name} could not be read (${isKubeError(err) ? err.code : 'error'})`;
    }
    if (value === undefined) return `header ${h.name}: Secret ${namespace}/${ref.name} has no key ${ref.key}`;
    headers[h.name] = value;
  }
  return headers;
}

function conditionsOf(web: Web): { success: Condition; failure: Condition | undefined } | string {
  const success = parseCondition(web.successCondition);
  if ('error' in success) return `successCondition: ${success.error}`;
  const failure = web.failureCondition === undefined ? undefined : parseCondition(web.failureCondition);
  if (failure && 'error' in failure) return `failureCondition: ${failure.error}`;
  return { success, failure };
}

/** One measurement: the request, its answer parsed as JSON, judged. `namespace`: the App's. */
export async function measureWeb(web: Web, namespace: string, deps: WebDeps, now: () => Date, onNoData?: NoData): Promise<Measurement> {
  const unmeasured = errorMeasurement;
  const conditions = conditionsOf(web);
  if (typeof conditions === 'string') return unmeasured(conditions, now());
  const headers = await headersOf(web.headers, namespace, deps);
  if (typeof headers === 'string') return unmeasured(headers, now());
  const method = web.method ?? 'GET';
  let text: string;
  try {
    const res = await deps.http(
      namespace,
      {
        url: web.url,
        method,
        headers: { accept: 'application/json', ...(method === 'POST' ? { 'content-type': 'application/json' } : {}), ...headers },
        body: method === 'POST' ? web.body : undefined,
        timeoutMs: (web.timeoutSeconds ?? DEFAULT_WEB_TIMEOUT_SECONDS) * 1000,
      },
      deps.signal,
    );
    if (res.status < 200 || res.status > 299) return unmeasured(`${method} ${web.url}: HTTP ${res.status}`, now());
    text = res.text;
  } catch (err) {
    return unmeasured(`${method} ${web.url}: ${requestFailure(err)}`, now());
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return unmeasured(`${method} ${web.url}: the answer is not JSON`, now());
  }
  const verdict = judge(doc, conditions.success, conditions.failure);
  if (verdict.phase === 'NoData') return noDataMeasurement(onNoData, verdict.message ?? '', now());
  return {
    phase: verdict.phase,
    ...(verdict.value === undefined ? {} : { value: verdict.value.slice(0, 1024) }),
    ...(verdict.message === undefined ? {} : { message: verdict.message.slice(0, 1024) }),
    measuredAt: now().toISOString(),
  };
}
