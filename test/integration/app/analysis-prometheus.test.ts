/**
 * A canary judged by a real Prometheus on the sandbox: Prometheus (Debian's `prometheus`) scrapes a tiny
 * exporter served by this test, which reports an error ratio per revision. The check's query names the
 * update revision (`${REVISION}`):
 * - a failing ratio aborts the canary and rolls it back, no pod of the stable revision ever deleted;
 * - a passing ratio lets it complete;
 * - no data for the revision is inconclusive and pauses the rollout.
 * A query naming an unknown variable, or with unbalanced parentheses, is refused at admission.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalysisPhase, type AnalysisCheck } from '../../../src/api/analysis.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { AbortReason } from '../../../src/api/rollout-abort.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { startPrometheus, type RunningPrometheus } from '../../../harness/sandbox/prometheus.ts';
import { rejection } from '../support.ts';
import { createApp, image, patchApp, revisionOf, settled, type Snapshot, template, uniqueName, until, useController } from './harness.ts';

const ctl = useController('analysis-prom');
/** The error ratio the exporter reports, by revision. */
const ratios = new Map<string, number>();
let exporter: Server;
let prometheus: RunningPrometheus | undefined;

beforeAll(async () => {
  exporter = createServer((_req, res) => {
    const lines = ['# TYPE http_error_ratio gauge', ...[...ratios].map(([rev, v]) => `http_error_ratio{revision="${rev}"} ${v}`), ''];
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(lines.join('\n'));
  });
  await new Promise<void>((resolve) => exporter.listen(0, '127.0.0.1', resolve));
  prometheus = await startPrometheus([`127.0.0.1:${(exporter.address() as AddressInfo).port}`]);
  // Prometheus starts scraping a few seconds after it is ready: wait for the first scrape of the exporter.
  const url = prometheus.url;
  await waitFor(
    async () => {
      const body = (await (await fetch(`${url}/api/v1/query?query=up`)).json()) as { data?: { result?: { value: [number, string] }[] } };
      return body.data?.result?.[0]?.value[1] === '1' ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: 'the first scrape' },
  );
}, 60_000);
afterAll(async () => {
  await prometheus?.stop();
  await new Promise<void>((resolve) => exporter.close(() => resolve()));
});

const errors = (): AnalysisCheck => ({
  name: 'errors',
  interval: '2s',
  count: 3,
  // The first measurement may come before Prometheus scraped the new revision's ratio: one without data is tolerated.
  inconclusiveLimit: 1,
  prometheus: {
    address: prometheus?.url ?? '',
    query: 'max(http_error_ratio{revision="${REVISION}"})',
    successCondition: 'result < 0.05',
    failureCondition: 'result > 0.2',
  },
});

/** An App of 3 at v1 with the canary [1, analysis errors, 100%], then v2; the update revision once known. */
async function rolling(prefix: string): Promise<{ name: string; stable: Snapshot; next: string }> {
  const name = uniqueName(prefix);
  const rollingUpdate = { canary: { steps: [{ replicas: 1 }, { analysis: ['errors'] }, { replicas: '100%' }] }, analysis: { checks: [errors()] } };
  await createApp(ctl.ns, name, {
    replicas: 3,
    podManagementPolicy: 'Parallel',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate },
  });
  const stable = await settled(ctl.ns, name, undefined, 90_000);
  await patchApp(ctl.ns, name, { template: template(name, 'v2') });
  const moved = await until(ctl.ns, name, (s) => s.app.status?.updateRevision !== stable.app.status?.updateRevision, { timeoutMs: 30_000 });
  return { name, stable, next: moved.app.status?.updateRevision ?? '' };
}

describe('a canary judged by Prometheus', () => {
  it('a failing error ratio aborts it; no stable pod is deleted', async () => {
    const { name, stable, next } = await rolling('pr-bad');
    ratios.set(next, 0.5);
    const v1 = stable.app.status?.updateRevision ?? '';
    const kept = new Set(stable.pods.filter((p) => p.metadata.name !== `${name}-2`).map((p) => p.metadata.uid ?? ''));
    const gone = new Set<string>();
    const onEach = (s: Snapshot) => {
      for (const uid of kept) if (!s.pods.some((p) => p.metadata.uid === uid && !p.metadata.deletionTimestamp)) gone.add(uid);
    };
    const aborted = await until(ctl.ns, name, (s) => s.app.status?.abort !== undefined, { onEach, timeoutMs: 60_000, what: `App ${name} aborted` });
    expect(aborted.app.status?.abort).toMatchObject({ reason: AbortReason.analysisFailed, measurement: { analysis: 'errors', value: '0.5' } });
    await until(ctl.ns, name, (s) => s.pods.length === 3 && s.pods.every((p) => revisionOf(p) === v1 && isRunningAndReady(p)), { onEach, timeoutMs: 90_000 });
    expect(gone).toEqual(new Set());
  });

  it('a passing error ratio lets it complete', async () => {
    const { name, next } = await rolling('pr-ok');
    ratios.set(next, 0.01);
    const done = await settled(ctl.ns, name, next, 90_000);
    const run = done.app.status?.analysis?.runs[0];
    expect(run).toMatchObject({ name: 'errors', phase: AnalysisPhase.successful, failed: 0 });
    expect(run?.successful).toBeGreaterThanOrEqual(2);
    expect(done.pods.every((p) => p.spec?.['containers']?.[0]?.image === image('v2'))).toBe(true);
  });

  it('no data for the revision is an error by default: never a pause, and an abort after consecutiveErrorLimit in a row', async () => {
    const { name } = await rolling('pr-none');
    const aborted = await until(ctl.ns, name, (s) => s.app.status?.abort !== undefined, { timeoutMs: 90_000, what: `App ${name} aborted` });
    expect(aborted.app.status?.analysis?.runs[0]).toMatchObject({ phase: AnalysisPhase.error, errors: 5, consecutiveErrors: 5, successful: 0, failed: 0 });
    expect(aborted.app.status?.analysis?.runs[0]?.measurements.at(-1)?.message).toBe('no data: the query returned no data');
    expect(aborted.app.spec.updateStrategy?.rollingUpdate?.paused).not.toBe(true);
  });
});

describe('a Prometheus query at admission', () => {
  const refused = async (query: string): Promise<string> => {
    const check = { ...errors(), prometheus: { ...errors().prometheus, query } };
    const create = createApp(ctl.ns, uniqueName('bad'), {
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { analysis: { checks: [check], background: ['errors'] } } } as AppSpec['updateStrategy'],
    });
    const err = await rejection(create);
    expect(err.status).toBe(422);
    return err.message;
  };

  it('refuses an unknown variable and unbalanced parentheses, naming the field', async () => {
    expect(await refused('up{app="${APP_NAME}"}')).toContain('analysis.checks[0].prometheus.query: Invalid value: "string": query names a variable other than');
    expect(await refused('sum(rate(up[1m])')).toContain('analysis.checks[0].prometheus.query: Invalid value: "string": query has unbalanced');
  });
});
