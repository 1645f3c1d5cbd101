/**
 * Check templates on the sandbox, with ebb's own watcher and worker and a real Prometheus scraping a tiny
 * exporter of Istio-style request counters:
 * - the success-rate AnalysisTemplate of Argo Rollouts' documentation, as translated in docs/migrating.md (read
 *   from that page; only its address changed to this Prometheus), used by an App as a CheckTemplate with an
 *   argument, beside a ClusterCheckTemplate: the canary completes;
 * - a check naming a CheckTemplate that its namespace lacks measures as errors naming the template, and aborts
 *   the rollout after consecutiveErrorLimit; a template of the same name in another namespace is never used;
 * - templates naming undeclared arguments, or with two providers, and checks with both a provider and a
 *   templateRef, are refused at admission.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalysisPhase, type AnalysisCheck } from '../../../src/api/analysis.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import type { CheckTemplate, CheckTemplateSpec } from '../../../src/api/check-template.ts';
import { API_VERSION, checkTemplateRef } from '../../../src/api/group.ts';
import { EventReason } from '../../../src/api/keys.ts';
import { AbortReason } from '../../../src/api/rollout-abort.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { startPrometheus, type RunningPrometheus } from '../../../harness/sandbox/prometheus.ts';
import { freshNamespace, rejection, sandbox } from '../support.ts';
import { createApp, eventsOf, image, patchApp, settled, template, uniqueName, until, useController } from './harness.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ctl = useController('analysis-tpl');
const rest = () => sandbox().rest;

/** The service the exporter reports requests of: 99 a second answered 200, 1 a second 500. */
const SERVICE = 'guestbook-svc.default.svc.cluster.local';
const started = Date.now();
let exporter: Server;
let prometheus: RunningPrometheus | undefined;
const clusterTemplates: string[] = [];

/** The ebb CheckTemplate docs/migrating.md gives as the translation of Argo's success-rate AnalysisTemplate. */
async function documentedTemplate(): Promise<CheckTemplate> {
  const page = await readFile(join(ROOT, 'docs', 'migrating.md'), 'utf8');
  const blocks = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  const docs = blocks.flatMap((b) => parseAllDocuments(b).map((d) => d.toJS() as Partial<CheckTemplate>));
  const found = docs.find((d) => d.kind === 'CheckTemplate' && d.metadata?.name === 'success-rate');
  if (!found) throw new Error('docs/migrating.md has no CheckTemplate success-rate');
  return found as CheckTemplate;
}

async function createTemplate(namespace: string | undefined, name: string, spec: CheckTemplateSpec): Promise<void> {
  const kind = namespace === undefined ? 'ClusterCheckTemplate' : 'CheckTemplate';
  const collection = { ...checkTemplateRef(namespace, name), name: undefined };
  await rest().create(collection, { apiVersion: API_VERSION, kind, metadata: { name }, spec });
  if (namespace === undefined) clusterTemplates.push(name);
}

beforeAll(async () => {
  exporter = createServer((_req, res) => {
    const t = (Date.now() - started) / 1000;
    const series = (code: string, perSecond: number) =>
      `istio_requests_total{reporter="source",destination_service="${SERVICE}",response_code="${code}"} ${Math.floor(t * perSecond)}`;
    const lines = ['# TYPE istio_requests_total counter', series('200', 99), series('500', 1), ''];
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(lines.join('\n'));
  });
  await new Promise<void>((done) => exporter.listen(0, '127.0.0.1', done));
  prometheus = await startPrometheus([`127.0.0.1:${(exporter.address() as AddressInfo).port}`]);
  // irate needs two samples of each series: wait until the success rate has a value.
  const url = prometheus.url;
  const query = `sum(irate(istio_requests_total{destination_service="${SERVICE}"}[5m]))`;
  await waitFor(
    async () => {
      const body = (await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`)).json()) as { data?: { result?: unknown[] } };
      return (body.data?.result?.length ?? 0) > 0 ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: 'two scrapes of the exporter' },
  );
}, 60_000);

afterAll(async () => {
  for (const name of clusterTemplates)
    await rest()
      .delete(checkTemplateRef(undefined, name))
      .catch(() => undefined);
  await prometheus?.stop();
  await new Promise<void>((done) => exporter.close(() => done()));
});

/** An App of 3 at v1 whose canary is [1, analysis `names`, 100%] with `checks`, then moved to v2; the update revision. */
async function rolling(prefix: string, checks: AnalysisCheck[], names: string[]): Promise<{ name: string; next: string }> {
  const name = uniqueName(prefix);
  const rollingUpdate = { canary: { steps: [{ replicas: 1 }, { analysis: names }, { replicas: '100%' }] }, analysis: { checks } };
  await createApp(ctl.ns, name, { replicas: 3, podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate } });
  const stable = await settled(ctl.ns, name, undefined, 90_000);
  await patchApp(ctl.ns, name, { template: template(name, 'v2') });
  const moved = await until(ctl.ns, name, (s) => s.app.status?.updateRevision !== stable.app.status?.updateRevision, { timeoutMs: 30_000 });
  return { name, next: moved.app.status?.updateRevision ?? '' };
}

describe('check templates', () => {
  it("Argo's success-rate template, translated, with an argument, and a ClusterCheckTemplate: the canary completes", async () => {
    const argo = await documentedTemplate();
    expect(argo.spec.prometheus?.address).toBe('http://prometheus.example.com:9090');
    await createTemplate(ctl.ns, 'success-rate', { ...argo.spec, prometheus: { ...argo.spec.prometheus!, address: prometheus?.url ?? '' } });
    const health = uniqueName('health');
    await createTemplate(undefined, health, { interval: '2s', count: 2, podHealth: { maxRestarts: 0 } });
    const checks: AnalysisCheck[] = [
      { name: 'success-rate', templateRef: { name: 'success-rate' }, args: [{ name: 'service-name', value: SERVICE }] },
      { name: 'health', templateRef: { name: health, kind: 'ClusterCheckTemplate' } },
    ];
    const { name, next } = await rolling('tpl-ok', checks, ['success-rate', 'health']);
    const done = await settled(ctl.ns, name, next, 120_000);
    expect(done.pods.every((p) => p.spec?.['containers']?.[0]?.image === image('v2'))).toBe(true);
    const runs = done.app.status?.analysis?.runs ?? [];
    const rate = runs.find((r) => r.name === 'success-rate');
    expect(rate).toMatchObject({ phase: AnalysisPhase.successful, failed: 0, successful: 1 });
    // 99 of 100 requests a second answer 200; irate over two scrapes taken under load moves it a little.
    const value = Number(rate?.measurements.at(-1)?.value);
    expect(value).toBeGreaterThanOrEqual(0.95);
    expect(value).toBeLessThan(1);
    expect(runs.find((r) => r.name === 'health')).toMatchObject({ phase: AnalysisPhase.successful, successful: 2 });
  });

  it("a template missing from the App's namespace aborts after consecutiveErrorLimit; another namespace's of that name is not used", async () => {
    const other = await freshNamespace('tpl-other');
    await createTemplate(other, 'shared', { podHealth: {} });
    const gate: AnalysisCheck = { name: 'gate', templateRef: { name: 'shared' }, interval: '1s', consecutiveErrorLimit: 1 };
    const { name } = await rolling('tpl-missing', [gate], ['gate']);
    const aborted = await until(ctl.ns, name, (s) => s.app.status?.abort !== undefined, { timeoutMs: 60_000, what: `App ${name} aborted` });
    const message = `CheckTemplate "shared" not found in namespace ${ctl.ns}`;
    expect(aborted.app.status?.abort).toMatchObject({ reason: AbortReason.analysisFailed, measurement: { analysis: 'gate', condition: message } });
    expect(aborted.app.status?.analysis?.runs[0]).toMatchObject({ name: 'gate', phase: AnalysisPhase.error, errors: 2, successful: 0 });
    const warnings = await eventsOf(ctl.ns, name, EventReason.analysisMeasurementError);
    expect(warnings.some((e) => e.note.includes(message))).toBe(true);
  });
});

describe('check templates at admission', () => {
  const rate = (query: string): CheckTemplateSpec => ({
    args: [{ name: 'service' }],
    prometheus: { address: 'http://prometheus.example.com:9090', query, successCondition: 'result >= 0.95' },
  });

  it('refuses an argument the template does not declare, and two providers', async () => {
    const undeclared = await rejection(createTemplate(ctl.ns, uniqueName('bad'), rate('sum(up{job="${args.servce}"})')));
    expect(undeclared.message).toContain('prometheus.query names an argument args does not declare');
    const two = await rejection(createTemplate(ctl.ns, uniqueName('bad'), { ...rate('sum(up)'), podHealth: {} }));
    expect(two.message).toContain('a check template must set exactly one provider');
    await createTemplate(ctl.ns, uniqueName('good'), rate('sum(up{job="${args.service}", app="${APP}"})'));
  });

  it('refuses a check with both a provider and a templateRef, and args without a templateRef', async () => {
    const refused = async (check: AnalysisCheck): Promise<string> => {
      const updateStrategy = { type: 'RollingUpdate', rollingUpdate: { analysis: { checks: [check], background: [check.name] } } };
      const err = await rejection(createApp(ctl.ns, uniqueName('bad'), { updateStrategy } as Partial<AppSpec>));
      expect(err.status).toBe(422);
      return err.message;
    };
    expect(await refused({ name: 'c', podHealth: {}, templateRef: { name: 't' } })).toContain(
      'exactly one provider (podHealth, web or prometheus) or a templateRef',
    );
    expect(await refused({ name: 'c', podHealth: {}, args: [{ name: 'a', value: 'b' }] })).toContain('args require a templateRef');
  });
});
