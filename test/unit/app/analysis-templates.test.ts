/**
 * Check templates made concrete: arguments filled in (the App's value, else the template's default), the App's
 * limits over the template's, and every way a check cannot be made concrete turned into an unresolved check
 * that measures as an error with a message naming the template. The read: a CheckTemplate only ever from the
 * App's own namespace, and nothing read for an App whose checks name no template.
 */
import { describe, expect, it } from 'vitest';
import { AnalysisPhase, MeasurementPhase, type AnalysisCheck } from '../../../src/api/analysis.ts';
import type { CheckTemplate, CheckTemplateSpec } from '../../../src/api/check-template.ts';
import { API_VERSION } from '../../../src/api/group.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import { FakeCluster } from '../../../harness/fakes/cluster.ts';
import { analysisBook } from '../../../src/workers/app/rollout/analysis/book.ts';
import { readResolvedChecks } from '../../../src/workers/app/rollout/analysis/template-read.ts';
import { resolveCheck, resolveChecks, templateKey, type TemplateLookup } from '../../../src/workers/app/rollout/analysis/templates.ts';
import { makeApp, NS } from './fixtures.ts';

const SUCCESS_RATE: CheckTemplateSpec = {
  args: [{ name: 'service-name' }, { name: 'threshold', value: '0.95' }],
  interval: '5m',
  count: 3,
  failureLimit: 3,
  prometheus: {
    address: 'http://prometheus.example.com:9090',
    query:
      'sum(rate(http_requests_total{service="${args.service-name}",code!~"5.."}[5m])) / sum(rate(http_requests_total{service="${args.service-name}"}[5m]))',
    headers: [{ name: 'X-Service', value: '${args.service-name}' }],
    successCondition: 'result >= 0.95',
  },
};

const templates = (entries: [AnalysisCheck['templateRef'] & object, TemplateLookup][]): Map<string, TemplateLookup> =>
  new Map(entries.map(([ref, t]) => [templateKey(ref), t]));

const ref = { name: 'success-rate' };

describe('resolveCheck', () => {
  it('fills in the arguments (the App value, else the default) and lays the App limits over the template', () => {
    const check: AnalysisCheck = { name: 'rate', templateRef: ref, args: [{ name: 'service-name', value: 'web' }], interval: '30s', dryRun: true };
    const out = resolveCheck(check, templates([[ref, { spec: SUCCESS_RATE }]]));
    expect(out).toEqual({
      name: 'rate',
      interval: '30s',
      count: 3,
      failureLimit: 3,
      dryRun: true,
      prometheus: {
        address: 'http://prometheus.example.com:9090',
        query: 'sum(rate(http_requests_total{service="web",code!~"5.."}[5m])) / sum(rate(http_requests_total{service="web"}[5m]))',
        headers: [{ name: 'X-Service', value: 'web' }],
        successCondition: 'result >= 0.95',
      },
    });
    expect(out.unresolved).toBeUndefined();
  });

  it('leaves query variables to the measurement and a check without templateRef as it is', () => {
    const spec: CheckTemplateSpec = { web: { url: 'http://${args.host}/health?app=${APP}', successCondition: '$.ok == true' }, args: [{ name: 'host' }] };
    const out = resolveCheck({ name: 'w', templateRef: ref, args: [{ name: 'host', value: 'checks.example.com:8080' }] }, templates([[ref, { spec }]]));
    expect(out.web?.url).toBe('http://checks.example.com:8080/health?app=${APP}');
    const inline: AnalysisCheck = { name: 'h', podHealth: {} };
    expect(resolveChecks([inline], new Map())).toEqual([inline]);
  });

  it('a ClusterCheckTemplate is looked up apart from a CheckTemplate of the same name', () => {
    const cluster = { name: 'success-rate', kind: 'ClusterCheckTemplate' as const };
    const spec: CheckTemplateSpec = { podHealth: { maxRestarts: 0 } };
    const found = templates([[cluster, { spec }]]);
    expect(resolveCheck({ name: 'c', templateRef: cluster }, found)).toEqual({ name: 'c', podHealth: { maxRestarts: 0 } });
    expect(resolveCheck({ name: 'n', templateRef: ref }, found).unresolved).toBe('CheckTemplate "success-rate" was not read');
  });

  it.each<[string, AnalysisCheck, TemplateLookup, string]>([
    ['a missing template', { name: 'r', templateRef: ref }, { missing: 'CheckTemplate "success-rate" not found in namespace ns' }, 'not found in namespace ns'],
    ['an argument without a value', { name: 'r', templateRef: ref }, { spec: SUCCESS_RATE }, 'argument "service-name" has no value'],
    [
      'an argument the template does not declare',
      {
        name: 'r',
        templateRef: ref,
        args: [
          { name: 'service-name', value: 'web' },
          { name: 'servce', value: 'x' },
        ],
      },
      { spec: SUCCESS_RATE },
      'declares no argument "servce"',
    ],
    [
      'a header naming an argument the template does not declare',
      { name: 'r', templateRef: ref, args: [{ name: 'service-name', value: 'web' }] },
      { spec: { ...SUCCESS_RATE, prometheus: { ...SUCCESS_RATE.prometheus!, headers: [{ name: 'X-Team', value: '${args.team}' }] } } },
      'names ${args.team}, an argument it does not declare',
    ],
    [
      'an argument that leaves no http(s) URL',
      { name: 'r', templateRef: ref, args: [{ name: 'at', value: 'file:///etc/passwd' }] },
      { spec: { args: [{ name: 'at' }], web: { url: '${args.at}', successCondition: '$.ok == true' } } },
      'web.url is not an http:// or https:// URL',
    ],
  ])('%s makes the check unresolved, keeping its own limits', (_what, check, lookup, message) => {
    const out = resolveCheck({ ...check, consecutiveErrorLimit: 1 }, templates([[ref, lookup]]));
    expect(out.unresolved).toContain(message);
    expect(out).toMatchObject({ name: 'r', consecutiveErrorLimit: 1 });
    expect(out.prometheus ?? out.web ?? out.podHealth).toBeUndefined();
  });
});

describe('an unresolved check in the book', () => {
  it('measures as an error in the plan (nothing asked of the measure queue) and fails past consecutiveErrorLimit', () => {
    const check = { name: 'rate', interval: '1s', consecutiveErrorLimit: 1, unresolved: 'CheckTemplate "success-rate" not found in namespace ns' };
    const vars = { APP: 'web', NAMESPACE: NS, REVISION: 'r2', STABLE_REVISION: 'r1', CANARY_PODS: '^$' };
    let prior;
    let failure;
    for (let s = 0; s < 60 && !failure; s += 10) {
      const book = analysisBook({
        revision: 'r2',
        vars,
        checks: new Map([['rate', check]]),
        prior,
        restart: false,
        updated: [],
        now: new Date(Date.UTC(2026, 0, 1, 0, 0, s)),
      });
      book.step(1, ['rate']);
      expect(book.requests()).toEqual([]);
      prior = book.status() ?? prior;
      failure = book.failure();
      const event = book.events()[0];
      expect(event?.kind === 'event' && event.event.message).toContain('CheckTemplate "success-rate" not found in namespace ns');
    }
    expect(prior?.runs[0]).toMatchObject({ phase: AnalysisPhase.error, errors: 2 });
    expect(prior?.runs[0]?.measurements.at(-1)).toMatchObject({
      phase: MeasurementPhase.error,
      message: 'CheckTemplate "success-rate" not found in namespace ns',
    });
    expect(failure?.message).toContain('2 measurements in a row could not be taken');
  });
});

describe('readResolvedChecks', () => {
  const template = (namespace: string | undefined, name: string, spec: CheckTemplateSpec): CheckTemplate => ({
    apiVersion: API_VERSION,
    kind: namespace === undefined ? 'ClusterCheckTemplate' : 'CheckTemplate',
    metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
    spec,
  });

  it('reads nothing when no check names a template', async () => {
    const cluster = new FakeCluster();
    const app = makeApp('web', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { analysis: { checks: [{ name: 'h', podHealth: {} }] } } } });
    expect(await readResolvedChecks(cluster.client().checkTemplates, app)).toBeUndefined();
    expect(cluster.calls.count('checkTemplates.get')).toBe(0);
  });

  it("reads a CheckTemplate from the App's namespace only, and a ClusterCheckTemplate, once each", async () => {
    const cluster = new FakeCluster();
    cluster.checkTemplates.set('other/success-rate', template('other', 'success-rate', SUCCESS_RATE));
    cluster.checkTemplates.set('/health', template(undefined, 'health', { podHealth: {} }));
    const checks: AnalysisCheck[] = [
      { name: 'rate', templateRef: ref, args: [{ name: 'service-name', value: 'web' }] },
      { name: 'health', templateRef: { name: 'health', kind: 'ClusterCheckTemplate' } },
      { name: 'health-again', templateRef: { name: 'health', kind: 'ClusterCheckTemplate' }, count: 2 },
    ];
    const app = makeApp('web', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { analysis: { checks } } } });
    const out = await readResolvedChecks(cluster.client().checkTemplates, app);
    expect(out?.[0]?.unresolved).toBe(`CheckTemplate "success-rate" not found in namespace ${NS}`);
    expect(out?.slice(1)).toEqual([
      { name: 'health', podHealth: {} },
      { name: 'health-again', count: 2, podHealth: {} },
    ]);
    expect(cluster.calls.count('checkTemplates.get')).toBe(2);

    cluster.checkTemplates.set(`${NS}/success-rate`, template(NS, 'success-rate', SUCCESS_RATE));
    expect((await readResolvedChecks(cluster.client().checkTemplates, app))?.[0]?.prometheus?.query).toContain('service="web"');
  });

  it('a template the worker may not read is unresolved; another failed read fails the reconcile', async () => {
    const cluster = new FakeCluster();
    const app = makeApp('web', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { analysis: { checks: [{ name: 'rate', templateRef: ref }] } } } });
    cluster.calls.failNth('checkTemplates.get', 1, new KubeError('Forbidden', 403, 'forbidden', 'Forbidden'));
    expect((await readResolvedChecks(cluster.client().checkTemplates, app))?.[0]?.unresolved).toBe(
      `CheckTemplate "success-rate" in namespace ${NS} may not be read by the ebb worker`,
    );
    cluster.calls.failNth('checkTemplates.get', 1, new KubeError('ServerError', 500, 'boom', 'InternalError'));
    await expect(readResolvedChecks(cluster.client().checkTemplates, app)).rejects.toThrow(KubeError);
  });
});
