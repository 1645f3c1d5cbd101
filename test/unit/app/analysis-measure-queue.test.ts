/**
 * Measurements off the reconcile's slot, as pure decisions: the identity of a due measurement (stable across
 * re-plans, distinct per measurement, revision, run and check), what the book plans with finished and pending
 * measurements, the reconcile's desk (one read, asks only for what is missing), and the stored result's bound.
 */
import { describe, expect, it } from 'vitest';
import { AnalysisPhase, MeasurementPhase, type AnalysisCheck, type AnalysisStatus, type Measurement } from '../../../src/api/analysis.ts';
import type { App } from '../../../src/api/app.ts';
import type { Stored } from '../../../src/kube/types.ts';
import type { MeasureJob } from '../../../src/queue/measure-queue.ts';
import { analysisBook, MEASUREMENT_PENDING_WAIT_MS, type BookInput } from '../../../src/workers/app/rollout/analysis/book.ts';
import type { MeasureRequest } from '../../../src/workers/app/model/analysis-io.ts';
import { measureDesk, readOnlyDesk, type MeasureAdder } from '../../../src/workers/measure/desk.ts';
import { measureJobId, ownMeasureJob } from '../../../src/workers/measure/identity.ts';
import { decodeResult, encodeResult, MAX_RESULT_BYTES, MAX_RESULT_TEXT, type ResultStore } from '../../../src/workers/measure/store.ts';

const web: AnalysisCheck = { name: 'errors', interval: '10s', count: 3, web: { url: 'http://checks.example/errors', successCondition: '$.ok == true' } };
const vars = { APP: 'web', NAMESPACE: 'team-a', REVISION: 'web-2', STABLE_REVISION: 'web-1', CANARY_PODS: 'web-0' };
const t0 = new Date('2026-01-01T00:00:00Z');
const at = (s: number): Date => new Date(t0.getTime() + s * 1000);

function input(prior: AnalysisStatus | undefined, now: Date, taken?: ReadonlyMap<string, Measurement>): BookInput {
  return { revision: 'web-2', vars, checks: new Map([[web.name, web]]), prior, restart: false, updated: [], now, taken };
}

/** Plans the way the plan loop does: first without measurements, then with those `collect` gives for the requests. */
function plan(prior: AnalysisStatus | undefined, now: Date, collect: (rs: MeasureRequest[]) => Map<string, Measurement>) {
  const first = analysisBook(input(prior, now));
  first.background([web.name]);
  const requests = first.requests();
  const second = analysisBook(input(prior, now, collect(requests)));
  const verdict = second.background([web.name]);
  return { requests, book: second, verdict };
}

const ok = (s: number): Measurement => ({ phase: MeasurementPhase.successful, value: 'true', measuredAt: at(s).toISOString() });

const app = { metadata: { namespace: 'team-a', name: 'web', uid: 'uid-1' } } as Stored<App>;

function jobOf(r: MeasureRequest, over: Partial<MeasureJob> = {}): Omit<MeasureJob, 'vars'> {
  return { namespace: 'team-a', name: 'web', uid: 'uid-1', revision: r.vars.REVISION, key: r.key, due: r.due ?? '', check: r.check, ...over };
}

describe('a due measurement handed to the measure queue', () => {
  it('is recorded as a started run before it is asked for, then asked for under the run it belongs to', () => {
    // A check with no run yet: nothing is finished, so the run is recorded (no measurement) and looked at again soon.
    const started = plan(undefined, at(0), () => new Map());
    expect(started.requests).toEqual([expect.objectContaining({ key: '-/errors', due: undefined })]);
    const record = started.book.status();
    expect(record?.runs).toEqual([expect.objectContaining({ name: 'errors', phase: AnalysisPhase.running, startedAt: at(0).toISOString(), measurements: [] })]);
    expect(started.verdict).toBe('running');
    // The next reconcile asks for its first measurement, due at the run's start.
    const asked = plan(record, at(1), () => new Map());
    expect(asked.requests).toEqual([expect.objectContaining({ key: '-/errors', due: at(0).toISOString() })]);
    // Pending: no status change, a short wait.
    expect(asked.book.status()).toBeUndefined();
    expect(asked.book.wait()).toEqual({ reason: 'analysis', afterMs: MEASUREMENT_PENDING_WAIT_MS });
    expect(asked.book.events()).toEqual([]);
  });

  it('has one id however often it is re-planned, and another for the next measurement, revision, run, check or App', () => {
    const record = plan(undefined, at(0), () => new Map()).book.status();
    const ids = [1, 2, 30].map((s) => {
      const [r] = plan(record, at(s), () => new Map()).requests;
      return measureJobId(jobOf(r!));
    });
    expect(new Set(ids).size).toBe(1);
    const [r] = plan(record, at(1), () => new Map()).requests;
    const id = ids[0];
    // Judged: the run's next due time names the next measurement.
    const judged = plan(record, at(2), () => new Map([['-/errors', ok(2)]]));
    const next = judged.book.status();
    const [r2] = plan(next, at(13), () => new Map()).requests;
    expect(r2?.due).toBe(next?.runs[0]?.nextMeasurementAt);
    const others = [
      measureJobId(jobOf(r2!)),
      measureJobId(jobOf(r!, { revision: 'web-3' })),
      measureJobId(jobOf(r!, { key: '1/errors' })),
      measureJobId(jobOf(r!, { uid: 'uid-2' })),
      measureJobId(jobOf(r!, { check: { ...web, interval: '20s' } })),
      measureJobId(jobOf(r!, { due: at(5).toISOString() })),
    ];
    expect(new Set([id, ...others]).size).toBe(others.length + 1);
    expect(id).toMatch(/^Measure\.team-a\.web\.[0-9a-f]{32}$/);
    expect(id).not.toContain(':');
  });

  it('a run started again (an abort retried) has a new identity', () => {
    const first = plan(undefined, at(0), () => new Map()).book.status();
    const again = plan(undefined, at(100), () => new Map()).book.status();
    const [a] = plan(first, at(1), () => new Map()).requests;
    const [b] = plan(again, at(101), () => new Map()).requests;
    expect(measureJobId(jobOf(a!))).not.toBe(measureJobId(jobOf(b!)));
  });

  it('the planner judges only finished measurements', () => {
    const record = plan(undefined, at(0), () => new Map()).book.status();
    const failed: Measurement = { phase: MeasurementPhase.failed, value: 'false', measuredAt: at(3).toISOString() };
    const judged = plan(record, at(4), () => new Map([['-/errors', failed]]));
    expect(judged.verdict).toBe('failed');
    expect(judged.book.failure()).toBeDefined();
    expect(judged.book.status()?.runs[0]).toMatchObject({ failed: 1, measurements: [failed] });
    // Pending, the same record says nothing of it.
    const pending = plan(record, at(4), () => new Map());
    expect(pending.verdict).toBe('running');
    expect(pending.book.failure()).toBeUndefined();
  });
});

describe("the reconcile's desk", () => {
  function fakes(stored: Map<string, Measurement>) {
    const reads: string[][] = [];
    const added: string[] = [];
    const store: ResultStore = {
      read: (ids) => {
        reads.push([...ids]);
        return Promise.resolve(ids.map((id) => stored.get(id)));
      },
      write: () => Promise.resolve(),
    };
    const queue: MeasureAdder = {
      addBulk: (jobs) => {
        added.push(...jobs.map((j) => j.opts.jobId));
        return Promise.resolve();
      },
    };
    return { desk: measureDesk(store, queue), reads, added };
  }

  it('reads every due result at once, asks only for the missing ones, and skips runs not recorded yet', async () => {
    const due = at(0).toISOString();
    const requests: MeasureRequest[] = [
      { key: '-/errors', check: web, vars, due },
      { key: '1/errors', check: web, vars, due },
      { key: '2/errors', check: web, vars },
    ];
    const done = measureJobId(jobOf(requests[0]!));
    const missing = measureJobId(jobOf(requests[1]!));
    const { desk, reads, added } = fakes(new Map([[done, ok(1)]]));
    const found = await desk.collect(app, requests);
    expect([...found]).toEqual([['-/errors', ok(1)]]);
    expect(reads).toEqual([[done, missing]]);
    expect(added).toEqual([missing]);
  });
});

describe("explain's desk", () => {
  it('reads the finished results of the due requests and asks for nothing (it has no queue to ask)', async () => {
    const due = at(0).toISOString();
    const requests: MeasureRequest[] = [
      { key: '-/errors', check: web, vars, due },
      { key: '1/errors', check: web, vars, due },
      { key: '2/errors', check: web, vars },
    ];
    const done = measureJobId(jobOf(requests[0]!));
    const missing = measureJobId(jobOf(requests[1]!));
    const reads: string[][] = [];
    const desk = readOnlyDesk({ read: (ids) => (reads.push([...ids]), Promise.resolve(ids.map((id) => (id === done ? ok(1) : undefined)))) });
    expect([...(await desk.collect(app, requests))]).toEqual([['-/errors', ok(1)]]);
    expect(reads).toEqual([[done, missing]]);
  });
});

describe('a stored result', () => {
  it('is bounded: texts cut to the status bound, the whole under MAX_RESULT_BYTES', () => {
    const huge: Measurement = { phase: MeasurementPhase.inconclusive, message: 'x'.repeat(100_000), value: '"'.repeat(5_000), measuredAt: at(0).toISOString() };
    const text = encodeResult(huge);
    expect(text.length).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    const back = decodeResult(text);
    expect(back?.phase).toBe(MeasurementPhase.inconclusive);
    expect(back?.message?.length ?? 0).toBeLessThanOrEqual(MAX_RESULT_TEXT);
    expect(decodeResult(encodeResult(ok(3)))).toEqual(ok(3));
  });

  it('read back only when it is a measurement ebb could have written', () => {
    for (const bad of [
      null,
      '',
      'not json',
      '[]',
      '{"phase":"Maybe","measuredAt":"2026-01-01T00:00:00Z"}',
      '{"phase":"Successful"}',
      `{"phase":"Successful","measuredAt":"2026-01-01T00:00:00Z","message":"${'x'.repeat(MAX_RESULT_TEXT + 1)}"}`,
      '{"phase":"Successful","measuredAt":"2026-01-01T00:00:00Z","value":{"a":1}}',
    ])
      expect(decodeResult(bad)).toBeUndefined();
  });

  it("a job whose id is not its payload's is not ebb's", () => {
    const job: MeasureJob = { namespace: 'team-a', name: 'web', uid: 'u', revision: 'web-2', key: '-/errors', due: at(0).toISOString(), check: web, vars };
    const id = measureJobId(job);
    expect(ownMeasureJob(id, job)).toEqual(job);
    expect(ownMeasureJob(id, { ...job, check: { ...web, web: { ...web.web!, url: 'http://169.254.169.254/' } } })).toBeUndefined();
    expect(ownMeasureJob(id, { ...job, namespace: 'Bad Namespace' })).toBeUndefined();
    expect(ownMeasureJob(id, 'x')).toBeUndefined();
  });
});
