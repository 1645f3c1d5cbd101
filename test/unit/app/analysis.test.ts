/**
 * Scenario tests of the analysis: a canary step's podHealth check passes a healthy canary, aborts a
 * crash-looping one (back to the stable revision, no stable pod deleted), pauses on an inconclusive result
 * (resuming measures again), and a background check aborts a rolling update; errors abort only after
 * consecutiveErrorLimit in a row, initialDelay holds the first measurement, dry-run checks never act.
 * Invariants hold throughout.
 */
import { describe, expect, it } from 'vitest';
import { AnalysisPhase, type AnalysisCheck } from '../../../src/api/analysis.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { ConditionType, EventReason } from '../../../src/api/keys.ts';
import { AbortReason, RolloutAnnotation } from '../../../src/api/rollout-abort.ts';
import type { CanaryStep } from '../../../src/api/update-strategy.ts';
import { getPodRevision } from '../../../src/workers/app/pods/predicates.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const image = (ref: string) => ({ template: { spec: { containers: [{ name: 'main', image: ref }] } } });
const health: AnalysisCheck = { name: 'health', interval: '3s', count: 3, podHealth: { maxNotReadySeconds: 5 } };

function spec(rollingUpdate: Record<string, unknown>): Partial<AppSpec> {
  return { replicas: 4, podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, ...rollingUpdate } } };
}

const deletesOf = (s: Scenario, revision: string): number =>
  s.plans.flatMap((p) => p.actions.filter((a) => a.kind === 'deletePod' && a.revision === revision)).length;

const allAt = (s: Scenario, revision: string): boolean =>
  s.pods().length === 4 && s.pods().every((p) => getPodRevision(p) === revision) && s.app().status?.availableReplicas === 4;

/** An App of 4 at v1 with `checks` defined (and `background` named), then its template set to `ref`. */
async function rolledTo(
  steps: CanaryStep[] | undefined,
  ref: string,
  checks: AnalysisCheck[] = [health],
  background?: string[],
): Promise<{ s: Scenario; stable: string }> {
  const analysis = { checks, ...(background ? { background } : {}) };
  const s = new Scenario(spec({ ...(steps ? { canary: { steps } } : {}), analysis }), { neverReady: /crashloop/ });
  await s.runUntil((x) => x.converged());
  const stable = s.app().status!.updateRevision!;
  s.arm({ maxUnavailable: 1 });
  s.edit(image(ref));
  return { s, stable };
}

describe('a canary analysis step', () => {
  const steps: CanaryStep[] = [{ replicas: 1 }, { analysis: ['health'] }, { replicas: '100%' }];

  it('passes a healthy canary after its measurements, then the rollout completes', async () => {
    const { s, stable } = await rolledTo(steps, 'registry.example/web:v2');
    await s.runUntil((x) => x.app().status?.updateRevision !== stable && x.converged(), 80);
    const run = s.app().status?.analysis?.runs.find((r) => r.name === 'health');
    expect(run).toMatchObject({ step: 1, phase: AnalysisPhase.successful, successful: 3, failed: 0 });
    // Measurements taken while the canary pod was not yet available are kept, uncounted.
    expect(run?.measurements.length).toBeGreaterThanOrEqual(3);
    // Measured on timers: the plans asked to be woken for the next measurement.
    expect(s.plans.some((p) => p.wait?.reason === 'analysis')).toBe(true);
    expect(s.app().status?.abort).toBeUndefined();
    expect(s.violations).toEqual([]);
  });

  it('aborts a crash-looping canary by itself: back to the stable revision, no stable pod deleted', async () => {
    const { s, stable } = await rolledTo(steps, 'registry.example/crashloop:v2');
    await s.runUntil((x) => x.app().status?.abort !== undefined, 60);
    // Judged before the canary pod ever became available: the replicas step never completed.
    expect(s.app().status?.canary).toEqual({ step: 0 });
    const stableDeletes = deletesOf(s, stable);
    const bad = s.app().status!.updateRevision!;
    expect(s.app().status?.abort).toMatchObject({ revision: bad, reason: AbortReason.analysisFailed, measurement: { analysis: 'health' } });
    expect(s.app().status?.abort?.measurement?.condition).toMatch(/pod web-3: not ready for \d+s \(limit 5s\)/);
    await s.runUntil((x) => allAt(x, stable), 60);
    expect(s.app().status?.conditions?.find((c) => c.type === ConditionType.aborted)).toMatchObject({ status: 'True', reason: AbortReason.analysisFailed });
    expect(s.app().status?.analysis?.runs[0]).toMatchObject({ phase: AnalysisPhase.failed, failed: 1 });
    expect(deletesOf(s, stable)).toBe(stableDeletes);
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.analysisMeasurementFailed)).toHaveLength(1);
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.rolloutAborted)).toHaveLength(1);
    // It stays aborted, measuring no more.
    const recorded = JSON.stringify(s.app().status?.analysis);
    for (let i = 0; i < 8; i++) await s.step();
    expect(JSON.stringify(s.app().status?.analysis)).toBe(recorded);
    expect(s.revisionCounts()).toEqual({ [stable]: 4 });
    expect(s.violations).toEqual([]);
  });

  it('pauses on an inconclusive result; resuming measures again instead of passing the step', async () => {
    // Analysis before any pod is updated: no data, which this check counts as inconclusive.
    const { s, stable } = await rolledTo([{ analysis: ['health'] }, { replicas: '100%' }], 'registry.example/web:v2', [
      { ...health, onNoData: 'Inconclusive' },
    ]);
    await s.runUntil((x) => x.app().spec.updateStrategy?.rollingUpdate?.paused === true, 20);
    expect(s.app().status?.analysis?.runs[0]).toMatchObject({ phase: AnalysisPhase.inconclusive, inconclusive: 1 });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.analysisMeasurementInconclusive)).toHaveLength(1);
    for (let i = 0; i < 6; i++) await s.step();
    expect(s.revisionCounts()).toEqual({ [stable]: 4 });
    expect(s.app().status?.abort).toBeUndefined();
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => x.app().status?.analysis?.runs[0]?.measurements.length === 2, 20);
    // Measured again, still nothing to judge: paused again, and no pod moved.
    await s.runUntil((x) => x.app().spec.updateStrategy?.rollingUpdate?.paused === true, 20);
    expect(s.app().status?.analysis?.runs[0]).toMatchObject({ phase: AnalysisPhase.inconclusive, inconclusive: 1 });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.analysisMeasurementInconclusive)).toHaveLength(2);
    for (let i = 0; i < 6; i++) await s.step();
    expect(s.revisionCounts()).toEqual({ [stable]: 4 });
    expect(s.violations).toEqual([]);
  });

  it('no data is an error by default: it neither pauses nor aborts until more than consecutiveErrorLimit in a row', async () => {
    // The step's check starts before any pod is updated; the rollout cannot go on, so the errors add up.
    const { s, stable } = await rolledTo([{ analysis: ['health'] }, { replicas: '100%' }], 'registry.example/web:v2');
    await s.runUntil((x) => (x.app().status?.analysis?.runs[0]?.consecutiveErrors ?? 0) >= 4, 40);
    expect(s.app().spec.updateStrategy?.rollingUpdate?.paused).not.toBe(true);
    expect(s.app().status?.abort).toBeUndefined();
    await s.runUntil((x) => x.app().status?.abort !== undefined, 20);
    expect(s.app().status?.analysis?.runs[0]).toMatchObject({ phase: AnalysisPhase.error, errors: 5, consecutiveErrors: 5, successful: 0 });
    expect(s.app().status?.abort?.message).toContain('5 measurements in a row could not be taken (consecutiveErrorLimit 4)');
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.analysisMeasurementError)).toHaveLength(5);
    expect(s.app().spec.updateStrategy?.rollingUpdate?.paused).not.toBe(true);
    await s.runUntil((x) => allAt(x, stable), 60);
    expect(s.violations).toEqual([]);
  });
});

describe('a background analysis', () => {
  it('aborts a rolling update whose updated pods crash-loop', async () => {
    const { s, stable } = await rolledTo(undefined, 'registry.example/crashloop:v2', [{ ...health, count: undefined }], ['health']);
    await s.runUntil((x) => x.app().status?.abort !== undefined, 60);
    expect(s.app().status?.abort).toMatchObject({ reason: AbortReason.analysisFailed, measurement: { analysis: 'health' } });
    await s.runUntil((x) => allAt(x, stable), 60);
    expect(s.app().status?.analysis?.runs[0]?.step).toBeUndefined();
    expect(s.violations).toEqual([]);
  });

  it('runs until the rollout of a healthy revision completes', async () => {
    const { s, stable } = await rolledTo(undefined, 'registry.example/web:v2', [{ ...health, count: undefined }], ['health']);
    await s.runUntil((x) => x.app().status?.updateRevision !== stable && x.converged(), 80);
    const run = s.app().status?.analysis?.runs[0];
    expect(run).toMatchObject({ phase: AnalysisPhase.running, failed: 0 });
    expect(run?.successful).toBeGreaterThan(0);
    // Done: no more measurements.
    const recorded = JSON.stringify(s.app().status?.analysis);
    for (let i = 0; i < 8; i++) await s.step();
    expect(JSON.stringify(s.app().status?.analysis)).toBe(recorded);
  });
});

describe('a web check', () => {
  /** Check HTTP answering `{"errorRate": rate()}`, counting its calls. */
  function fakeWeb(rate: () => number): { io: NonNullable<Scenario['analysisIO']>; calls: () => number } {
    let calls = 0;
    const http = () => {
      calls++;
      return Promise.resolve({ status: 200, text: JSON.stringify({ errorRate: rate() }) });
    };
    return { io: { http, secretValue: () => Promise.resolve(undefined), signal: new AbortController().signal }, calls: () => calls };
  }
  const web: AnalysisCheck = { name: 'errors', interval: '5s', count: 2, web: { url: 'http://metrics.example/rate', successCondition: '$.errorRate < 0.05' } };

  it('measures through the plan loop, once per interval, and passes', async () => {
    const { s, stable } = await rolledTo([{ replicas: 1 }, { analysis: ['errors'] }, { replicas: '100%' }], 'registry.example/web:v2', [web]);
    const w = fakeWeb(() => 0.01);
    s.analysisIO = w.io;
    await s.runUntil((x) => x.app().status?.updateRevision !== stable && x.converged(), 80);
    expect(s.app().status?.analysis?.runs[0]).toMatchObject({ name: 'errors', phase: AnalysisPhase.successful, successful: 2 });
    // Early measurements (before the canary pod was available) are requests too, but never more than one per interval.
    const measured = s.app().status?.analysis?.runs[0]?.measurements ?? [];
    expect(w.calls()).toBe(measured.length);
    const times = measured.map((m) => Date.parse(m.measuredAt));
    for (let i = 1; i < times.length; i++) expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(5000);
  });

  it('aborts when the answer fails the condition', async () => {
    const { s, stable } = await rolledTo([{ replicas: 1 }, { analysis: ['errors'] }, { replicas: '100%' }], 'registry.example/web:v2', [web]);
    s.analysisIO = fakeWeb(() => 0.5).io;
    await s.runUntil((x) => x.app().status?.abort !== undefined, 60);
    expect(s.app().status?.abort).toMatchObject({ reason: AbortReason.analysisFailed, measurement: { analysis: 'errors', value: '0.5' } });
    await s.runUntil((x) => allAt(x, stable), 60);
    expect(s.violations).toEqual([]);
  });

  it('in the background, an inconclusive answer pauses the rollout; resuming measures again', async () => {
    const { s, stable } = await rolledTo(undefined, 'registry.example/web:v2', [{ ...web, count: undefined }], ['errors']);
    // A value the condition cannot order: inconclusive.
    let answer: unknown = { errorRate: 'unknown' };
    s.analysisIO = {
      http: () => Promise.resolve({ status: 200, text: JSON.stringify(answer) }),
      secretValue: () => Promise.resolve(undefined),
      signal: new AbortController().signal,
    };
    await s.runUntil((x) => x.app().spec.updateStrategy?.rollingUpdate?.paused === true, 40);
    expect(s.app().status?.analysis?.runs[0]).toMatchObject({ phase: AnalysisPhase.inconclusive });
    expect(s.app().status?.analysis?.runs[0]?.step).toBeUndefined();
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.analysisInconclusive)).toHaveLength(1);
    const held = s.revisionCounts();
    for (let i = 0; i < 6; i++) await s.step();
    expect(s.revisionCounts()).toEqual(held);
    // Resumed while the answer is still inconclusive: the check measures again and pauses again.
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => x.cluster.events.filter((e) => e.event.reason === EventReason.analysisInconclusive).length === 2, 40);
    await s.runUntil((x) => x.app().spec.updateStrategy?.rollingUpdate?.paused === true, 20);
    answer = { errorRate: 0 };
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => x.app().status?.updateRevision !== stable && x.converged(), 80);
    expect(s.app().status?.analysis?.runs[0]).toMatchObject({ phase: AnalysisPhase.running, inconclusive: 0 });
    expect(s.app().status?.analysis?.runs[0]?.successful).toBeGreaterThan(0);
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.analysisInconclusive)).toHaveLength(2);
    expect(s.violations).toEqual([]);
  });

  it('a server that cannot be reached is an error: retried sooner, no pause, and a success ends the streak', async () => {
    const { s, stable } = await rolledTo([{ replicas: 1 }, { analysis: ['errors'] }, { replicas: '100%' }], 'registry.example/web:v2', [
      { ...web, interval: '30s', count: 2 },
    ]);
    let down = true;
    s.analysisIO = {
      http: () => (down ? Promise.reject(new Error('connect ECONNREFUSED')) : Promise.resolve({ status: 200, text: JSON.stringify({ errorRate: 0 }) })),
      secretValue: () => Promise.resolve(undefined),
      signal: new AbortController().signal,
    };
    await s.runUntil((x) => (x.app().status?.analysis?.runs[0]?.consecutiveErrors ?? 0) >= 3, 60);
    const errs = (s.app().status?.analysis?.runs[0]?.measurements ?? []).filter((m) => m.phase === 'Error').map((m) => Date.parse(m.measuredAt));
    // Errors are retried after 10s, not the 30s interval.
    for (let i = 1; i < errs.length; i++) expect((errs[i] ?? 0) - (errs[i - 1] ?? 0)).toBeLessThan(30_000);
    expect(s.app().spec.updateStrategy?.rollingUpdate?.paused).not.toBe(true);
    down = false;
    await s.runUntil((x) => x.app().status?.updateRevision !== stable && x.converged(), 80);
    expect(s.app().status?.analysis?.runs[0]).toMatchObject({ phase: AnalysisPhase.successful, successful: 2, consecutiveErrors: 0 });
    expect(s.app().status?.abort).toBeUndefined();
    expect(s.violations).toEqual([]);
  });

  it('initialDelay holds the first measurement; a dry-run check that fails never acts', async () => {
    const failing: AnalysisCheck = { ...web, name: 'shadow', dryRun: true, count: 2, web: { ...web.web!, url: 'http://metrics.example/shadow' } };
    const delayed: AnalysisCheck = { ...web, initialDelay: '20s', count: 1 };
    const { s, stable } = await rolledTo([{ replicas: 1 }, { analysis: ['errors', 'shadow'] }, { replicas: '100%' }], 'registry.example/web:v2', [
      delayed,
      failing,
    ]);
    const started = s.clock.now().getTime();
    s.analysisIO = {
      http: (_ns, req) => Promise.resolve({ status: 200, text: JSON.stringify({ errorRate: req.url.endsWith('/shadow') ? 0.9 : 0 }) }),
      secretValue: () => Promise.resolve(undefined),
      signal: new AbortController().signal,
    };
    await s.runUntil((x) => x.app().status?.updateRevision !== stable && x.converged(), 80);
    const runs = s.app().status?.analysis?.runs ?? [];
    const first = runs.find((r) => r.name === 'errors')?.measurements[0];
    expect(Date.parse(first?.measuredAt ?? '') - started).toBeGreaterThanOrEqual(20_000);
    expect(runs.find((r) => r.name === 'shadow')).toMatchObject({ dryRun: true, phase: AnalysisPhase.failed });
    expect(s.app().status?.abort).toBeUndefined();
    expect(s.app().spec.updateStrategy?.rollingUpdate?.paused).not.toBe(true);
    expect(s.cluster.events.some((e) => e.event.reason === EventReason.analysisMeasurementFailed && e.event.message?.startsWith('dry-run '))).toBe(true);
    expect(s.violations).toEqual([]);
  });
});

describe('a full promote', () => {
  it("skips the revision's background checks: a crash-looping revision promoted fully is not measured, so not aborted", async () => {
    const { s, stable } = await rolledTo(undefined, 'registry.example/crashloop:v2', [{ ...health, count: undefined }], ['health']);
    await s.step();
    const next = s.app().status!.updateRevision!;
    expect(next).not.toBe(stable);
    s.cluster.annotateApp(NS, 'web', { [RolloutAnnotation.promote]: next, [RolloutAnnotation.promoteFull]: next });
    for (let i = 0; i < 30; i++) await s.step();
    expect(s.app().status?.abort).toBeUndefined();
    expect(s.app().status?.analysis?.runs.some((r) => r.measurements.length > 0) ?? false).toBe(false);
    // Served: the rollout is no longer to that revision once it completes, or a template change ends it.
    s.edit(image('registry.example/web:v3'));
    await s.runUntil((x) => x.app().status?.updateRevision !== next && x.converged(), 80);
    expect(s.app().metadata.annotations?.[RolloutAnnotation.promoteFull]).toBeUndefined();
  });
});

describe('a dry-run background check', () => {
  it('that ended inconclusive stays ended while the rollout goes on: it is not measured again at every reconcile', async () => {
    const dry: AnalysisCheck = {
      name: 'dry',
      interval: '3s',
      inconclusiveLimit: 0,
      dryRun: true,
      web: { url: 'http://metrics.example/rate', successCondition: '$.errorRate < 0.05' },
    };
    const { s } = await rolledTo(undefined, 'registry.example/web:v2', [dry], ['dry']);
    let calls = 0;
    // A value the condition cannot order: inconclusive.
    s.analysisIO = {
      http: () => {
        calls++;
        return Promise.resolve({ status: 200, text: JSON.stringify({ errorRate: 'unknown' }) });
      },
      secretValue: () => Promise.resolve(undefined),
      signal: new AbortController().signal,
    };
    await s.runUntil((x) => x.app().status?.analysis?.runs.some((r) => r.name === 'dry' && r.phase === AnalysisPhase.inconclusive) === true, 60);
    expect(s.app().spec.updateStrategy?.rollingUpdate?.paused).not.toBe(true);
    const measured = calls;
    for (let i = 0; i < 10; i++) await s.step();
    expect(calls).toBe(measured);
    expect(s.app().status?.analysis?.runs.find((r) => r.name === 'dry')?.phase).toBe(AnalysisPhase.inconclusive);
  });
});
