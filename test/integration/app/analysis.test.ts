/**
 * Analysis on the sandbox, with the real watcher and worker (measurements are timers, not a sleeping worker):
 * - the built-in podHealth check aborts a crash-looping canary by itself and rolls it back, no pod of the
 *   stable revision ever deleted;
 * - the same check passes a healthy canary, which completes;
 * - an inconclusive result (nothing to judge yet, with onNoData Inconclusive) pauses the rollout; resuming measures
 *   again (and pauses again while there is still nothing to judge) instead of passing the step;
 * - a web check against a local HTTP server, its token from a Secret, aborts a canary whose answer fails;
 * - a bad check is refused at admission with the field named.
 *
 * The sandbox's kubelet crash-loops images whose repository starts with `crashloop`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalysisPhase, type AnalysisCheck } from '../../../src/api/analysis.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { EventReason } from '../../../src/api/keys.ts';
import { AbortReason } from '../../../src/api/rollout-abort.ts';
import type { CanaryStep } from '../../../src/api/update-strategy.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { core } from '../../../src/kube/paths.ts';
import { rejection, sandbox } from '../support.ts';
import { createApp, eventsOf, getApp, image, patchApp, revisionOf, settled, type Snapshot, uniqueName, until, useController } from './harness.ts';

const ctl = useController('analysis');
const CRASHING = 'registry.example.com/team/crashloop:v2';
const health: AnalysisCheck = { name: 'health', interval: '2s', count: 3, podHealth: { maxNotReadySeconds: 6 } };
const probe = { exec: { command: ['true'] }, periodSeconds: 1 };

const probed = (name: string, ref: string): AppSpec['template'] => ({
  metadata: { labels: { app: name } },
  spec: { containers: [{ name: 'main', image: ref, startupProbe: probe, readinessProbe: probe }], terminationGracePeriodSeconds: 1 },
});

async function canaryApp(prefix: string, steps: CanaryStep[], checks: AnalysisCheck[] = [health]): Promise<{ name: string; stable: Snapshot }> {
  const name = uniqueName(prefix);
  await createApp(ctl.ns, name, {
    replicas: 3,
    podManagementPolicy: 'Parallel',
    template: probed(name, image('v1')),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps }, analysis: { checks } } },
  });
  return { name, stable: await settled(ctl.ns, name, undefined, 90_000) };
}

const steps: CanaryStep[] = [{ replicas: 1 }, { analysis: ['health'] }, { replicas: '100%' }];

describe('analysis', () => {
  it('the built-in check aborts a crash-looping canary by itself; no stable pod is deleted', async () => {
    const { name, stable } = await canaryApp('an-bad', steps);
    const v1 = stable.app.status?.updateRevision ?? '';
    const stableUids = new Set(stable.pods.map((p) => p.metadata.uid ?? ''));
    await patchApp(ctl.ns, name, { template: probed(name, CRASHING) });
    const canary = await until(ctl.ns, name, (s) => s.pods.some((p) => p.spec?.['containers']?.[0]?.image === CRASHING), { timeoutMs: 60_000 });
    // From here on the stable pods (those not replaced by the canary) must all survive.
    const kept = new Set(canary.pods.filter((p) => revisionOf(p) === v1).map((p) => p.metadata.uid ?? ''));
    const gone = new Set<string>();
    const onEach = (s: Snapshot) => {
      for (const uid of kept) if (!s.pods.some((p) => p.metadata.uid === uid && !p.metadata.deletionTimestamp)) gone.add(uid);
    };
    const aborted = await until(ctl.ns, name, (s) => s.app.status?.abort !== undefined, { onEach, timeoutMs: 60_000, what: `App ${name} aborted` });
    expect(aborted.app.status?.abort).toMatchObject({ reason: AbortReason.analysisFailed, measurement: { analysis: 'health' } });
    expect(aborted.app.status?.abort?.measurement?.condition).toMatch(/^pod .*-2: /);
    expect(aborted.app.status?.analysis?.runs[0]).toMatchObject({ name: 'health', step: 1, phase: AnalysisPhase.failed });
    const back = await until(
      ctl.ns,
      name,
      (s) => s.pods.length === 3 && s.pods.every((p) => !p.metadata.deletionTimestamp && isRunningAndReady(p) && revisionOf(p) === v1),
      { onEach, timeoutMs: 90_000, what: `App ${name} rolled back` },
    );
    expect(gone).toEqual(new Set());
    expect(kept.size).toBe(2);
    expect([...kept].every((uid) => stableUids.has(uid))).toBe(true);
    expect(back.pods.every((p) => p.spec?.['containers']?.[0]?.image === image('v1'))).toBe(true);
    expect((await getApp(ctl.ns, name)).spec.template.spec?.containers[0]?.image).toBe(CRASHING);
    expect((await eventsOf(ctl.ns, name, EventReason.analysisMeasurementFailed)).length).toBeGreaterThanOrEqual(1);
    expect(await eventsOf(ctl.ns, name, EventReason.rolloutAborted)).toHaveLength(1);
  });

  it('a passing analysis lets the canary complete', async () => {
    const { name, stable } = await canaryApp('an-ok', steps);
    await patchApp(ctl.ns, name, { template: probed(name, image('v2')) });
    const done = await until(ctl.ns, name, (s) => s.app.status?.updateRevision !== stable.app.status?.updateRevision && s.app.status?.canary?.step === 3, {
      timeoutMs: 90_000,
    });
    const v2 = done.app.status?.updateRevision ?? '';
    const finished = await settled(ctl.ns, name, v2, 90_000);
    expect(finished.app.status?.analysis?.runs[0]).toMatchObject({ name: 'health', phase: AnalysisPhase.successful, successful: 3, failed: 0 });
    expect(finished.app.status?.abort).toBeUndefined();
    expect(await eventsOf(ctl.ns, name, EventReason.analysisMeasurementFailed)).toHaveLength(0);
  });

  it('an inconclusive result pauses the rollout; resuming measures again instead of passing the step', async () => {
    const { name, stable } = await canaryApp('an-inc', [{ analysis: ['health'] }, { replicas: '100%' }], [{ ...health, onNoData: 'Inconclusive' }]);
    const v1 = stable.app.status?.updateRevision ?? '';
    await patchApp(ctl.ns, name, { template: probed(name, image('v2')) });
    // The pause (a spec write) lands before the status that records the run: wait until the worker saw its pause.
    const paused = await until(
      ctl.ns,
      name,
      (s) => s.app.spec.updateStrategy?.rollingUpdate?.paused === true && s.app.status?.observedGeneration === s.app.metadata.generation,
      { timeoutMs: 60_000 },
    );
    expect(paused.app.status?.analysis?.runs[0]).toMatchObject({ phase: AnalysisPhase.inconclusive, inconclusive: 1 });
    expect(paused.pods.map(revisionOf)).toEqual([v1, v1, v1]);
    expect(await eventsOf(ctl.ns, name, EventReason.analysisMeasurementInconclusive)).toHaveLength(1);
    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    // Still nothing to judge: measured again, paused again; no pod moved.
    const again = await until(
      ctl.ns,
      name,
      (s) => s.app.spec.updateStrategy?.rollingUpdate?.paused === true && (s.app.status?.analysis?.runs[0]?.measurements.length ?? 0) >= 2,
      { timeoutMs: 60_000, what: `App ${name} paused again` },
    );
    expect(again.app.status?.analysis?.runs[0]).toMatchObject({ phase: AnalysisPhase.inconclusive, inconclusive: 1 });
    expect(again.pods.map(revisionOf)).toEqual([v1, v1, v1]);
    expect(again.app.status?.abort).toBeUndefined();
    expect(again.app.status?.analysis?.runs[0]?.measurements.length).toBeGreaterThanOrEqual(2);
  });
});

describe('a web check against a local HTTP server', () => {
  let server: Server;
  let url = '';
  let rate = 0.5;
  const auths: (string | undefined)[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      auths.push(req.headers.authorization);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.headers.authorization === 'Bearer t0ken' ? { data: { errorRate: rate } } : {}));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rate`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('a failing answer aborts the canary; the token comes from a Secret of the App namespace', async () => {
    await sandbox().rest.create(core('secrets', ctl.ns), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'metrics' },
      stringData: { token: 'Bearer t0ken' },
    });
    const errors: AnalysisCheck = {
      name: 'errors',
      interval: '2s',
      count: 2,
      web: {
        url,
        headers: [{ name: 'Authorization', valueFrom: { secretKeyRef: { name: 'metrics', key: 'token' } } }],
        successCondition: '$.data.errorRate < 0.05',
      },
    };
    const { name, stable } = await canaryApp('an-web', [{ replicas: 1 }, { analysis: ['errors'] }, { replicas: '100%' }], [errors]);
    const v1 = stable.app.status?.updateRevision ?? '';
    rate = 0.5;
    await patchApp(ctl.ns, name, { template: probed(name, image('v2')) });
    const aborted = await until(ctl.ns, name, (s) => s.app.status?.abort !== undefined, { timeoutMs: 60_000, what: `App ${name} aborted` });
    expect(aborted.app.status?.abort).toMatchObject({ reason: AbortReason.analysisFailed, measurement: { analysis: 'errors', value: '0.5' } });
    expect(auths.length).toBeGreaterThan(0);
    expect(auths.every((a) => a === 'Bearer t0ken')).toBe(true);
    await until(ctl.ns, name, (s) => s.pods.length === 3 && s.pods.every((p) => revisionOf(p) === v1 && isRunningAndReady(p)), { timeoutMs: 60_000 });
  });
});

describe('analysis at admission', () => {
  const refused = async (rollingUpdate: Record<string, unknown>): Promise<string> => {
    const err = await rejection(createApp(ctl.ns, uniqueName('bad'), { updateStrategy: { type: 'RollingUpdate', rollingUpdate } }));
    expect(err.status).toBe(422);
    return err.message;
  };
  const step = (check: Record<string, unknown>) => ({
    canary: { steps: [{ replicas: 1 }, { analysis: [String(check['name'])] }] },
    analysis: { checks: [check] },
  });
  const at = 'spec.updateStrategy.rollingUpdate.analysis.checks[0]';

  it('refuses a bad interval, naming the field', async () => {
    expect(await refused(step({ ...health, interval: '500ms' }))).toContain(`${at}.interval: Invalid value`);
    expect(await refused(step({ ...health, interval: 'soon' }))).toContain(`${at}.interval in body should match`);
  });

  it('refuses a check without a provider, a step with two kinds, duplicate and unknown names', async () => {
    expect(await refused(step({ name: 'x' }))).toContain(`${at}: Invalid value: "object": each analysis check must set exactly one provider`);
    expect(await refused({ ...step(health), canary: { steps: [{ replicas: 1, analysis: ['health'] }] } })).toContain(
      'exactly one of replicas, pause or analysis',
    );
    expect(await refused({ analysis: { checks: [health, health] } })).toContain('analysis check names must be unique');
    expect(await refused({ ...step(health), canary: { steps: [{ analysis: ['other'] }] } })).toContain(
      'spec.updateStrategy.rollingUpdate.canary.steps: Invalid value: "object": a canary analysis step names a check analysis.checks does not define',
    );
    expect(await refused({ analysis: { checks: [health], background: ['other'] } })).toContain('analysis.background names a check');
    const bad = { name: 'web', web: { url: 'http://m.example/q', successCondition: 'len($.x) > 1' } };
    expect(await refused(step(bad))).toContain(`${at}.web.successCondition in body should match`);
    expect(await refused(step({ ...bad, web: { ...bad.web, url: 'file:///etc/passwd', successCondition: '$.x > 1' } }))).toContain(
      `${at}.web.url: Invalid value: "string": url must be an http:// or https:// URL`,
    );
    expect(await refused(step({ ...health, failureLimit: -1 }))).toContain(`${at}.failureLimit in body should be greater than or equal to 0`);
  });
});
