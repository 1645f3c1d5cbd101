/**
 * An abort lifts every pause ebb set itself, and only those, on the sandbox with the real watcher and worker:
 * - the README's shape: a background check turns inconclusive and pauses the rollout; a step's check then
 *   fails: the rollout is aborted and its canary goes back to the stable revision by itself;
 * - a person's pause (`paused: true` written by hand) holds the same abort until the person resumes.
 *
 * Both checks are web checks against a local server: `/background` answers a value neither condition holds
 * (inconclusive), `/step` answers `rate`, passing until the test turns it failing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalysisCheck } from '../../../src/api/analysis.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { ConditionType, Reason } from '../../../src/api/keys.ts';
import { AbortReason, PauseCause, RolloutAnnotation } from '../../../src/api/rollout-abort.ts';
import type { CanaryStep } from '../../../src/api/update-strategy.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { createApp, image, patchApp, revisionOf, settled, type Snapshot, uniqueName, until, useController } from './harness.ts';

const ctl = useController('abort-own');
const probe = { exec: { command: ['true'] }, periodSeconds: 1 };
const probed = (name: string, ref: string): AppSpec['template'] => ({
  metadata: { labels: { app: name } },
  spec: { containers: [{ name: 'main', image: ref, startupProbe: probe, readinessProbe: probe }], terminationGracePeriodSeconds: 1 },
});
const steps: CanaryStep[] = [{ replicas: 1 }, { analysis: ['errors'] }, { replicas: '100%' }];
const paused = (s: Snapshot) => s.app.spec.updateStrategy?.rollingUpdate?.paused === true;
const pausedBy = (s: Snapshot) => s.app.metadata.annotations?.[RolloutAnnotation.pausedBy];
const condition = (s: Snapshot, type: string) => s.app.status?.conditions?.find((c) => c.type === type);
const allAt = (s: Snapshot, revision: string) =>
  s.pods.length === 3 && s.pods.every((p) => !p.metadata.deletionTimestamp && isRunningAndReady(p) && revisionOf(p) === revision);

describe('an abort and the pauses in force', () => {
  let server: Server;
  let base = '';
  const rate = new Map<string, number>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      const [path, app] = (req.url ?? '').split('?app=');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ errorRate: path === '/background' ? 0.03 : (rate.get(app ?? '') ?? 0) }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const check = (name: string, path: string, app: string): AnalysisCheck => ({
    name,
    interval: '1s',
    count: 300,
    web: { url: `${base}${path}?app=${app}`, successCondition: '$.errorRate < 0.01', failureCondition: '$.errorRate > 0.05' },
  });

  async function app(prefix: string, background: boolean): Promise<{ name: string; v1: string }> {
    const name = uniqueName(prefix);
    const checks = [check('errors', '/step', name), ...(background ? [check('health', '/background', name)] : [])];
    await createApp(ctl.ns, name, {
      replicas: 3,
      podManagementPolicy: 'Parallel',
      template: probed(name, image('v1')),
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: { canary: { steps }, analysis: { checks, ...(background ? { background: ['health'] } : {}) } },
      },
    });
    const stable = await settled(ctl.ns, name, undefined, 90_000);
    return { name, v1: stable.app.status?.updateRevision ?? '' };
  }

  it('a background check pauses, a step check fails: the abort lifts the pause and the canary goes back', async () => {
    const { name, v1 } = await app('own-bg', true);
    await patchApp(ctl.ns, name, { template: probed(name, image('v2')) });
    const held = await until(ctl.ns, name, (s) => paused(s) && s.pods.some((p) => revisionOf(p) !== v1), { timeoutMs: 90_000, what: 'paused by the check' });
    const v2 = held.app.status?.updateRevision ?? '';
    expect(held.app.status?.abort).toBeUndefined();

    rate.set(name, 0.5);
    const back = await until(ctl.ns, name, (s) => allAt(s, v1) && condition(s, ConditionType.progressing)?.reason === Reason.rolloutAborted, {
      timeoutMs: 120_000,
      what: `App ${name} back at ${v1}`,
    });
    expect(back.app.status?.abort).toMatchObject({ revision: v2, reason: AbortReason.analysisFailed, measurement: { analysis: 'errors' } });
    expect(paused(back)).toBe(false);
    expect(pausedBy(back)).toBeUndefined();
    expect(pausedBy(held)).toBe(`${PauseCause.analysisInconclusive}/${v2}`);
  });

  it("a person's pause holds the abort until the person resumes", async () => {
    const { name, v1 } = await app('own-person', false);
    await patchApp(ctl.ns, name, { template: probed(name, image('v2')) });
    const canary = await until(
      ctl.ns,
      name,
      (s) => s.app.status?.canary?.step === 1 && s.pods.filter((p) => revisionOf(p) !== v1 && isRunningAndReady(p)).length === 1,
      {
        timeoutMs: 90_000,
        what: 'the canary measured',
      },
    );
    const v2 = canary.app.status?.updateRevision ?? '';
    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: true } } });
    rate.set(name, 0.5);
    // The abort is recorded and the worker has planned on it since (Progressing says it rolls back), the pause holds.
    const aborted = await until(
      ctl.ns,
      name,
      (s) => condition(s, ConditionType.progressing)?.reason === Reason.rollingBack && condition(s, ConditionType.paused)?.status === 'True',
      {
        timeoutMs: 90_000,
        what: 'aborted while paused',
      },
    );
    expect(aborted.app.status?.abort).toMatchObject({ revision: v2, reason: AbortReason.analysisFailed });
    expect(paused(aborted)).toBe(true);
    expect(pausedBy(aborted)).toBeUndefined();
    expect(aborted.pods.filter((p) => revisionOf(p) === v2)).toHaveLength(1);

    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    await until(ctl.ns, name, (s) => allAt(s, v1) && condition(s, ConditionType.progressing)?.reason === Reason.rolloutAborted, {
      timeoutMs: 90_000,
      what: `App ${name} back at ${v1}`,
    });
  });
});
