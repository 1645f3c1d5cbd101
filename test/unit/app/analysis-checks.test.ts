/**
 * The analysis as pure decisions: one check's measurements over time (due times, limits, count, bounded
 * history) and the built-in podHealth provider's verdict on pods.
 */
import { describe, expect, it } from 'vitest';
import { AnalysisPhase, MeasurementPhase, type AnalysisCheck, type Measurement } from '../../../src/api/analysis.ts';
import type { Pod, Stored } from '../../../src/kube/types.ts';
import { measurePodHealth } from '../../../src/workers/app/rollout/analysis/pod-health.ts';
import { advanceRun, type RunOutcome } from '../../../src/workers/app/rollout/analysis/run.ts';
import { measuredSince } from '../../../src/workers/app/rollout/analysis/book.ts';
import { makeApp, podFor } from './fixtures.ts';
import { Annotation } from '../../../src/api/keys.ts';
import { restartsSinceRevision } from '../../../src/workers/inplace/restart-baseline.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000);
const m = (phase: Measurement['phase'], s: number): Measurement => ({ phase, value: phase, measuredAt: at(s).toISOString() });

/** Runs a check through `phases`, one measurement per call at the due time; how many times it measured. */
function drive(check: AnalysisCheck, step: number | undefined, phases: Measurement['phase'][]): { out: RunOutcome; measured: number } {
  let out: RunOutcome | undefined;
  let measured = 0;
  let t = 0;
  for (const phase of phases) {
    out = advanceRun({ check, step, prior: out?.run, now: at(t), measure: () => (measured++, m(phase, t)) });
    t += (out.waitMs ?? 0) / 1000;
  }
  if (!out) throw new Error('no phases');
  return { out, measured };
}

describe('advanceRun', () => {
  const check: AnalysisCheck = { name: 'health', interval: '10s', count: 3, podHealth: {} };

  it('measures at once, then only when the interval passed', () => {
    const first = advanceRun({ check, step: 1, prior: undefined, now: at(0), measure: () => m('Successful', 0) });
    expect(first).toMatchObject({ waitMs: 10_000, run: { phase: AnalysisPhase.running, successful: 1, step: 1 } });
    let calls = 0;
    const early = advanceRun({ check, step: 1, prior: first.run, now: at(4), measure: () => (calls++, m('Failed', 4)) });
    expect(calls).toBe(0);
    expect(early.waitMs).toBe(6_000);
    expect(early.run).toBe(first.run);
  });

  it('passes after count measurements; the record stays as it ended', () => {
    const { out, measured } = drive(check, 0, ['Successful', 'Successful', 'Successful', 'Failed']);
    expect(measured).toBe(3);
    expect(out.run).toMatchObject({ phase: AnalysisPhase.successful, successful: 3, failed: 0 });
    expect(out.run.nextMeasurementAt).toBeUndefined();
  });

  it('fails once more than failureLimit measurements failed', () => {
    expect(drive({ ...check, count: 5, failureLimit: 1 }, 0, ['Failed', 'Successful', 'Failed']).out.run.phase).toBe(AnalysisPhase.failed);
    expect(drive({ ...check, count: 5, failureLimit: 1 }, 0, ['Failed', 'Successful']).out.run.phase).toBe(AnalysisPhase.running);
  });

  it('is inconclusive once more than inconclusiveLimit were', () => {
    expect(drive(check, 0, ['Inconclusive']).out.run.phase).toBe(AnalysisPhase.inconclusive);
    expect(drive({ ...check, inconclusiveLimit: 1 }, 0, ['Inconclusive', 'Successful', 'Successful']).out.run.phase).toBe(AnalysisPhase.successful);
  });

  it('a background check without count runs on, keeping the last ten measurements', () => {
    const { out } = drive({ ...check, count: undefined }, undefined, Array<Measurement['phase']>(25).fill('Successful'));
    expect(out.run).toMatchObject({ phase: AnalysisPhase.running, successful: 25 });
    expect(out.run.step).toBeUndefined();
    expect(out.run.measurements).toHaveLength(10);
    expect(out.run.measurements.at(-1)?.measuredAt).toBe(at(240).toISOString());
  });

  it('a step check without count passes after one measurement', () => {
    expect(drive({ name: 'once', podHealth: {} }, 2, ['Successful']).out.run.phase).toBe(AnalysisPhase.successful);
  });
});

describe('measurePodHealth', () => {
  const app = makeApp('web', { replicas: 2 });
  const now = new Date('2025-01-01T00:10:00Z');
  const withStatus = (pod: Stored<Pod>, status: Partial<NonNullable<Pod['status']>>): Stored<Pod> => ({ ...pod, status: { ...pod.status, ...status } });
  const container = (restartCount: number, waiting?: string) => ({
    name: 'main',
    image: 'x',
    imageID: '',
    ready: waiting === undefined,
    restartCount,
    state: waiting === undefined ? { running: {} } : { waiting: { reason: waiting } },
    lastState: {},
  });

  it('has no data without updated pods: an error by default, or what onNoData says', () => {
    expect(measurePodHealth({}, [], now)).toMatchObject({ phase: MeasurementPhase.error, value: 'no data' });
    expect(measurePodHealth({}, [], now, 'Inconclusive').phase).toBe(MeasurementPhase.inconclusive);
  });

  it('passes ready pods under the restart limit', () => {
    const pod = withStatus(podFor(app, 1, 'r2'), { containerStatuses: [container(1)] });
    expect(measurePodHealth({ maxRestarts: 1 }, [pod], now)).toMatchObject({
      phase: MeasurementPhase.successful,
      value: '1 updated pods, 1 ready, 1 restarts',
    });
  });

  it('fails a crash loop, unless allowed', () => {
    const pod = withStatus(podFor(app, 1, 'r2'), { containerStatuses: [container(0, 'CrashLoopBackOff')] });
    expect(measurePodHealth({}, [pod], now)).toMatchObject({ phase: MeasurementPhase.failed, message: 'pod web-1: container main in CrashLoopBackOff' });
    expect(measurePodHealth({ allowCrashLoop: true }, [pod], now).phase).toBe(MeasurementPhase.successful);
  });

  it('fails too many restarts', () => {
    const pod = withStatus(podFor(app, 0, 'r2'), { containerStatuses: [container(3)] });
    expect(measurePodHealth({}, [pod], now)).toMatchObject({ phase: MeasurementPhase.failed, message: 'pod web-0: 3 restarts (limit 2)' });
  });

  describe('restarts since the pod reached the update revision', () => {
    const three = (counts: number[]) => counts.map((n, i) => ({ ...container(n), name: `c${i}` }));
    const annotate = (pod: Stored<Pod>, annotations: Record<string, string>): Stored<Pod> => ({
      ...pod,
      metadata: { ...pod.metadata, annotations: { ...pod.metadata.annotations, ...annotations } },
    });
    const baseline = (revision: string, restarts: Record<string, number>) => ({ [Annotation.restartBaseline]: JSON.stringify({ revision, restarts }) });

    it('does not charge an in-place update its own restarts, nor the restarts before it', () => {
      // Three containers changed image in place (one restart each), one of them had restarted twice before.
      const pod = annotate(withStatus(podFor(app, 1, 'r2'), { containerStatuses: three([3, 1, 1]) }), baseline('r2', { c0: 3, c1: 1, c2: 1 }));
      expect(measurePodHealth({}, [pod], now)).toMatchObject({ phase: MeasurementPhase.successful, value: '1 updated pods, 1 ready, 0 restarts' });
      // Without the baseline (a pod created at the revision), every restart counts.
      expect(measurePodHealth({}, [withStatus(podFor(app, 1, 'r2'), { containerStatuses: three([3, 1, 1]) })], now).phase).toBe(MeasurementPhase.failed);
    });

    it('counts restarts after the update, and ignores a baseline of another revision', () => {
      const pod = annotate(withStatus(podFor(app, 1, 'r2'), { containerStatuses: three([1, 4, 1]) }), baseline('r2', { c0: 1, c1: 1, c2: 1 }));
      expect(measurePodHealth({}, [pod], now)).toMatchObject({ phase: MeasurementPhase.failed, message: 'pod web-1: 3 restarts (limit 2)' });
      const stale = annotate(withStatus(podFor(app, 1, 'r2'), { containerStatuses: three([1, 1, 1]) }), baseline('r1', { c0: 1, c1: 1, c2: 1 }));
      expect(measurePodHealth({}, [stale], now).value).toBe('1 updated pods, 1 ready, 3 restarts');
    });

    it('while the update finishes, allows each updated container its one restart', () => {
      const state = { revision: 'r2', oldRestartCounts: { c0: 5, c1: 0 } };
      const pod = annotate(withStatus(podFor(app, 1, 'r2'), { containerStatuses: three([6, 1, 9]) }), {
        [Annotation.inPlaceUpdateState]: JSON.stringify(state),
      });
      // readState validates the whole state: a partial one is ignored, so give it every field.
      const full = {
        ...state,
        startedAt: '2025-01-01T00:00:00Z',
        oldImageIDs: {},
        oldContainerIDs: {},
        oldImages: {},
        newImages: {},
        resources: {},
        oldResources: {},
        batches: [['c0', 'c1']],
        batch: 0,
        patchedAt: ['2025-01-01T00:00:01Z'],
      };
      const finishing = annotate(pod, { [Annotation.inPlaceUpdateState]: JSON.stringify(full) });
      expect(restartsSinceRevision(finishing)).toEqual({ c0: 0, c1: 0, c2: 0 });
      expect(restartsSinceRevision(annotate(finishing, {}))).toEqual({ c0: 0, c1: 0, c2: 0 });
      const crashed = withStatus(finishing, { containerStatuses: three([8, 1, 0]) });
      expect(restartsSinceRevision(crashed)).toEqual({ c0: 2, c1: 0, c2: 0 });
    });
  });

  it('fails a pod not ready too long, naming a readiness gate not True', () => {
    const unready = podFor(app, 1, 'r2', 'unready', '2025-01-01T00:09:00Z');
    expect(measurePodHealth({ maxNotReadySeconds: 120 }, [unready], now).phase).toBe(MeasurementPhase.successful);
    const gated: Stored<Pod> = { ...unready, spec: { ...unready.spec, readinessGates: [{ conditionType: 'example.com/lb' }] } };
    expect(measurePodHealth({ maxNotReadySeconds: 30 }, [gated], now)).toMatchObject({
      phase: MeasurementPhase.failed,
      message: 'pod web-1: readiness gate example.com/lb not True for 60s (limit 30s)',
    });
  });
});

describe('measuredSince (the worker metric)', () => {
  const run = (phases: Measurement['phase'][]) => ({
    name: 'health',
    step: 1,
    phase: AnalysisPhase.running,
    startedAt: at(0).toISOString(),
    successful: 0,
    failed: 0,
    inconclusive: 0,
    measurements: phases.map((p, i) => m(p, i * 10)),
  });

  it('counts only the measurements a plan added, by phase', () => {
    const prior = { revision: 'r2', runs: [run(['Successful'])] };
    const next = { revision: 'r2', runs: [run(['Successful', 'Failed', 'Inconclusive'])] };
    expect(measuredSince(prior, next)).toEqual({ Failed: 1, Inconclusive: 1 });
    expect(measuredSince(next, next)).toEqual({});
    // A record of another revision is all new.
    expect(measuredSince({ ...prior, revision: 'r1' }, next)).toEqual({ Successful: 1, Failed: 1, Inconclusive: 1 });
  });
});
