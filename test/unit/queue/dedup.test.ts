/**
 * The client-go workqueue guarantee of the reconcile queue, proved against a real Redis: never two runs of
 * one key at once, and the last change of every key is processed by a run that starts after it.
 */
import { performance } from 'node:perf_hooks';
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { dedupId, RECONCILE_QUEUE, type ObjectKey } from '../../../src/queue/names.ts';
import { enqueue, type EnqueueResult } from '../../../src/queue/enqueue.ts';
import { reconcileWorkerOptions } from '../../../src/queue/queues.ts';
import { gate, sleepMs, useRedis } from './support.ts';

const redis = useRedis();
const appKey = (i: number): ObjectKey => ({ kind: 'App', namespace: 'ns', name: `app-${i}` });

interface Run {
  start: number;
  end: number;
  /** The version of the object the run saw when it started (what a worker would read from the apiserver). */
  seen: number;
}

describe('reconcile queue deduplication (keepLastIfActive)', () => {
  it('never runs one key twice at once and always processes the last change: 2 workers x 8, 200 enqueues over 20 keys', async () => {
    const cfg = redis.config({ EBB_WORKER_CONCURRENCY: '8' });
    const queue = redis.reconcileQueue(cfg);
    const version = new Map<string, number>();
    const lastChangeAt = new Map<string, number>();
    const inFlight = new Map<string, number>();
    const runs = new Map<string, Run[]>();
    const overlaps: string[] = [];

    const processor = async (job: Job<ObjectKey, void, string>): Promise<void> => {
      const id = dedupId(job.data);
      const start = performance.now();
      const seen = version.get(id) ?? 0;
      const now = (inFlight.get(id) ?? 0) + 1;
      inFlight.set(id, now);
      if (now > 1) overlaps.push(`${id} had ${now} concurrent runs`);
      await sleepMs(5 + Math.random() * 25);
      inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
      runs.set(id, [...(runs.get(id) ?? []), { start, end: performance.now(), seen }]);
    };
    for (let w = 0; w < 2; w++) redis.worker(RECONCILE_QUEUE, processor, reconcileWorkerOptions(redis.connection(true), cfg));

    const outcomes: EnqueueResult['outcome'][] = [];
    // Four producers, 50 changes each, with tiny random gaps: many changes land while their key is running.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let n = 0; n < 50; n++) {
          const key = appKey(Math.floor(Math.random() * 20));
          const id = dedupId(key);
          version.set(id, (version.get(id) ?? 0) + 1);
          lastChangeAt.set(id, performance.now());
          outcomes.push((await enqueue(queue, key)).outcome);
          await sleepMs(Math.random() * 4);
        }
      }),
    );

    await waitFor(
      async () => {
        const counts = await queue.getJobCounts('wait', 'active', 'prioritized', 'delayed');
        const idle = Object.values(counts).every((c) => c === 0);
        const caughtUp = [...version].every(([id, v]) => runs.get(id)?.some((r) => r.seen === v));
        return idle && caughtUp ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: 'every key to process its last change' },
    );

    expect(overlaps).toEqual([]);
    for (const [id, list] of runs) {
      const sorted = [...list].sort((a, b) => a.start - b.start);
      for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.start, `${id} run ${i} overlaps`).toBeGreaterThanOrEqual(sorted[i - 1]!.end);
      const last = sorted[sorted.length - 1]!;
      expect(last.start, `${id}: no run started after its last change`).toBeGreaterThan(lastChangeAt.get(id)!);
      expect(last.seen, `${id}: last run did not see the last change`).toBe(version.get(id));
    }
    // The test only proves something if changes were actually merged into pending and running jobs.
    expect(outcomes.filter((o) => o === 'merged').length).toBeGreaterThan(20);
    const totalRuns = [...runs.values()].reduce((n, l) => n + l.length, 0);
    // More runs than added jobs: some changes arrived while their key was running and got a follow-up run.
    expect(totalRuns).toBeGreaterThan(outcomes.filter((o) => o === 'added').length);
    expect(totalRuns).toBeLessThan(200);
    expect(redis.workerErrors).toEqual([]);
  }, 30_000);

  it('a change while the job runs yields exactly one follow-up run, started after the running one ended', async () => {
    const cfg = redis.config();
    const queue = redis.reconcileQueue(cfg);
    const key = appKey(1);
    const started: number[] = [];
    const ended: number[] = [];
    const first = gate();
    const running = gate();
    redis.worker(
      RECONCILE_QUEUE,
      async () => {
        started.push(performance.now());
        if (started.length === 1) {
          running.open();
          await first.promise;
        }
        ended.push(performance.now());
      },
      reconcileWorkerOptions(redis.connection(true), cfg),
    );

    expect((await enqueue(queue, key)).outcome).toBe('added');
    await running.promise;
    // Three changes while it runs: all merged into one stored follow-up.
    for (let i = 0; i < 3; i++) expect((await enqueue(queue, key)).outcome).toBe('merged');
    expect(await queue.getJobCounts('active', 'wait')).toEqual({ active: 1, wait: 0 });
    first.open();

    await waitFor(() => (ended.length === 2 ? true : undefined), { timeoutMs: 5_000, what: 'the follow-up run' });
    await sleepMs(200);
    expect(started).toHaveLength(2);
    expect(started[1]!).toBeGreaterThanOrEqual(ended[0]!);
    expect(await queue.getDeduplicationJobId(dedupId(key))).toBeNull();
  });

  it('a change merged into a waiting resync job raises its priority; resync never adds a second job', async () => {
    const cfg = redis.config();
    const queue = redis.reconcileQueue(cfg);
    const key = appKey(2);

    expect((await enqueue(queue, appKey(3), { background: true })).outcome).toBe('added');
    expect((await enqueue(queue, key, { background: true })).outcome).toBe('added');
    expect(await queue.getJobCounts('wait', 'prioritized')).toEqual({ wait: 0, prioritized: 2 });

    expect((await enqueue(queue, key, { background: true })).outcome).toBe('skipped');
    const merged = await enqueue(queue, key);
    expect(merged.outcome).toBe('merged');
    expect(await queue.getJobCounts('wait', 'prioritized')).toEqual({ wait: 1, prioritized: 1 });
    expect((await queue.getJob(merged.jobId))?.priority).toBe(0);
  });

  it('a change of a busy tenant is not skipped; a merged change raises a waiting job to its tier, never lowers it', async () => {
    const cfg = redis.config();
    const queue = redis.reconcileQueue(cfg);
    const key = appKey(5);

    const first = await enqueue(queue, key, { priority: 7 });
    expect(first.outcome).toBe('added');
    expect((await enqueue(queue, key, { priority: 9 })).outcome).toBe('merged');
    expect((await queue.getJob(first.jobId))?.priority).toBe(7);
    expect((await enqueue(queue, key, { priority: 3 })).outcome).toBe('merged');
    expect((await queue.getJob(first.jobId))?.priority).toBe(3);
    expect((await enqueue(queue, key, { background: true })).outcome).toBe('skipped');
    expect(await queue.getJobCounts('wait', 'prioritized')).toEqual({ wait: 0, prioritized: 1 });
  });

  it('a change pulls a job out of its retry backoff (client-go Add bypasses AddAfter)', { timeout: 45_000 }, async () => {
    const cfg = redis.config({ EBB_QUEUE_BACKOFF_BASE: '1m', EBB_QUEUE_BACKOFF_MAX: '1m' });
    const queue = redis.reconcileQueue(cfg);
    const key = appKey(4);
    const attempts: number[] = [];
    redis.worker(
      RECONCILE_QUEUE,
      (job) => {
        attempts.push(job.attemptsMade);
        return attempts.length === 1 ? Promise.reject(new Error('transient')) : Promise.resolve();
      },
      reconcileWorkerOptions(redis.connection(true), cfg),
    );

    await enqueue(queue, key);
    await waitFor(async () => ((await queue.getDelayedCount()) === 1 ? true : undefined), { timeoutMs: 5_000, what: 'the retry to be scheduled' });
    const t0 = performance.now();
    expect((await enqueue(queue, key)).outcome).toBe('merged');
    // Well before the 1 m backoff would have let it run: half of it is the bound, whatever the machine's load.
    await waitFor(() => (attempts.length === 2 ? true : undefined), { timeoutMs: 30_000, what: 'the rescheduled retry' });
    expect(performance.now() - t0).toBeLessThan(30_000);
    expect(attempts).toEqual([0, 1]);
  });
});
