/**
 * The Prometheus provider against a real Prometheus (Debian's `prometheus`) scraping a tiny exporter served by
 * this test: queries with the App's variables pass, fail, say nothing (inconclusive), return several series
 * or are bad (inconclusive); plus the pure parts (variables, answers).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Prometheus } from '../../../src/api/analysis.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { fillQuery, measurePrometheus, podsPattern, valueOf } from '../../../src/workers/app/rollout/analysis/prometheus.ts';
import type { QueryVariables } from '../../../src/workers/app/model/analysis-io.ts';
import type { WebDeps } from '../../../src/workers/app/rollout/analysis/web.ts';
import { allowEntries } from '../../../src/workers/egress/allowlist.ts';
import { checkHttp } from '../../../src/workers/egress/outbound.ts';
import { startPrometheus, type RunningPrometheus } from '../../../harness/sandbox/prometheus.ts';

const vars: QueryVariables = { APP: 'web', NAMESPACE: 'shop', REVISION: 'web-2', STABLE_REVISION: 'web-1', CANARY_PODS: podsPattern(['web-3', 'web-2']) };

describe('queries', () => {
  it('fills in the variables', () => {
    expect(fillQuery('sum(rate(x{app="${APP}",ns="${NAMESPACE}",rev="${REVISION}",pod=~"${CANARY_PODS}"}[1m])) / ${STABLE_REVISION}', vars)).toBe(
      'sum(rate(x{app="web",ns="shop",rev="web-2",pod=~"web-3|web-2"}[1m])) / web-1',
    );
    expect(podsPattern([])).toBe('^$');
  });

  it('takes one number from an answer, or says why not', () => {
    expect(valueOf({ status: 'success', data: { resultType: 'scalar', result: [1, '0.5'] } })).toBe(0.5);
    expect(valueOf({ status: 'success', data: { resultType: 'vector', result: [{ value: [1, '2'] }] } })).toBe(2);
    // No data and NaN are judged by onNoData; an answer that cannot be judged is an error.
    expect(valueOf({ status: 'success', data: { resultType: 'vector', result: [] } })).toEqual({ noData: 'the query returned no data' });
    expect(valueOf({ status: 'success', data: { resultType: 'scalar', result: [1, 'NaN'] } })).toEqual({ noData: 'the query returned NaN' });
    // An error answer's text is never repeated (the destination chose it); Prometheus's errorType words are.
    expect(valueOf({ status: 'error', errorType: 'bad_data' })).toEqual({ error: 'query error (bad_data): run the query in Prometheus to see why' });
    expect(valueOf({ status: 'error', errorType: 'token-abc' })).toEqual({ error: 'query error: run the query in Prometheus to see why' });
    expect(valueOf({ status: 'success', data: { resultType: 'secret-xyz', result: 1 } })).toEqual({
      error: 'the query returned a result (not a scalar or vector)',
    });
  });
});

describe('against a real Prometheus', () => {
  let exporter: Server;
  let prometheus: RunningPrometheus | undefined;
  const deps: WebDeps = {
    secretValue: undefined,
    http: checkHttp({ allowedHosts: allowEntries(['*/127.0.0.1']), networks: 'local' }),
    signal: new AbortController().signal,
  };
  const now = () => new Date();
  const metrics = [
    '# TYPE http_error_ratio gauge',
    'http_error_ratio{app="web",revision="web-1"} 0.01',
    'http_error_ratio{app="web",revision="web-2"} 0.5',
    '# TYPE http_requests gauge',
    'http_requests{pod="web-3"} 10',
    'http_requests{pod="web-2"} 5',
    'http_requests{pod="web-1"} 7',
    '',
  ].join('\n');

  beforeAll(async () => {
    exporter = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(metrics));
    await new Promise<void>((resolve) => exporter.listen(0, '127.0.0.1', resolve));
    prometheus = await startPrometheus([`127.0.0.1:${(exporter.address() as AddressInfo).port}`]);
    const url = prometheus.url;
    // Ready once the first scrape is stored.
    await waitFor(
      async () => {
        const res = await fetch(`${url}/api/v1/query?query=http_requests`);
        const body = (await res.json()) as { data?: { result?: unknown[] } };
        return (body.data?.result?.length ?? 0) === 3 ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'the first scrape' },
    );
  }, 60_000);
  afterAll(async () => {
    await prometheus?.stop();
    await new Promise<void>((resolve) => exporter.close(() => resolve()));
  });

  const check = (query: string, extra: Partial<Prometheus> = {}): Prometheus => ({
    address: prometheus?.url ?? '',
    query,
    successCondition: 'result < 0.05',
    ...extra,
  });
  const ratio = 'http_error_ratio{app="${APP}",revision="${REVISION}"}';

  it('fails the update revision whose error ratio is high, passes the stable one', async () => {
    expect(await measurePrometheus(check(ratio), 'shop', vars, deps, now)).toMatchObject({ phase: 'Failed', value: '0.5' });
    expect(await measurePrometheus(check(ratio), 'shop', { ...vars, REVISION: 'web-1' }, deps, now)).toMatchObject({ phase: 'Successful', value: '0.01' });
  });

  it('names the canary pods', async () => {
    const m = await measurePrometheus(check('sum(http_requests{pod=~"${CANARY_PODS}"})', { successCondition: 'result == 15' }), 'shop', vars, deps, now);
    expect(m).toMatchObject({ phase: 'Successful', value: '15' });
  });

  it('no data is judged by onNoData (an error by default); several series, a bad query or a server down are errors; between the conditions is inconclusive', async () => {
    const none = await measurePrometheus(check(ratio), 'shop', { ...vars, REVISION: 'web-9' }, deps, now);
    expect(none).toMatchObject({ phase: 'Error', value: 'no data', message: 'no data: the query returned no data' });
    expect((await measurePrometheus({ ...check(ratio), onNoData: 'Successful' }, 'shop', { ...vars, REVISION: 'web-9' }, deps, now)).phase).toBe('Successful');
    expect((await measurePrometheus({ ...check(ratio), onNoData: 'Inconclusive' }, 'shop', { ...vars, REVISION: 'web-9' }, deps, now)).phase).toBe(
      'Inconclusive',
    );
    const several = await measurePrometheus(check('http_error_ratio'), 'shop', vars, deps, now);
    expect(several.phase).toBe('Error');
    expect(several.message).toContain('returned 2 series');
    const between = await measurePrometheus(check(ratio, { failureCondition: 'result > 0.9' }), 'shop', vars, deps, now);
    expect(between.phase).toBe('Inconclusive');
    const bad = await measurePrometheus(check('sum(http_requests'), 'shop', vars, deps, now);
    expect(bad.phase).toBe('Error');
    expect(bad.message).toBe('query error (bad_data): run the query in Prometheus to see why');
    const down = await measurePrometheus({ ...check(ratio), address: 'http://127.0.0.1:1' }, 'shop', vars, deps, now);
    expect(down.phase).toBe('Error');
  });
});
