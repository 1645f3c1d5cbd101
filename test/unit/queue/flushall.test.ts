/**
 * Redis losing its data (FLUSHALL) while producers and workers are busy: nothing crashes, and both keep
 * working afterwards. (The watcher re-lists and re-enqueues everything, so lost intent is recovered there.)
 */
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { dedupId, RECONCILE_QUEUE, TIMERS_QUEUE, type ObjectKey } from '../../../src/queue/names.ts';
import { reconcileWorkerOptions, timersWorkerOptions } from '../../../src/queue/queues.ts';
import { processTimer, setTimer, type TimerData } from '../../../src/queue/timers.ts';
import { gate, sleepMs, useRedis } from './support.ts';

const redis = useRedis();
const appKey = (i: number): ObjectKey => ({ kind: 'App', namespace: 'ns', name: `app-${i}` });

describe('FLUSHALL during activity', () => {
  it('does not crash producers or workers, and they keep working afterwards', async () => {
    const cfg = redis.config();
    const reconcile = redis.reconcileQueue(cfg);
    const timers = redis.timersQueue(cfg);
    const processed = new Set<string>();
    // The next job to start is held until released: a flush then surely hits a running job.
    let holdNext: { started(): void; release: Promise<void> } | undefined;
    const worker = redis.worker<ObjectKey>(
      RECONCILE_QUEUE,
      async (job: Job<ObjectKey, void, string>) => {
        const hold = holdNext;
        holdNext = undefined;
        if (hold) {
          hold.started();
          await hold.release;
        }
        await sleepMs(5 + Math.random() * 15);
        processed.add(`${dedupId(job.data)}`);
      },
      reconcileWorkerOptions(redis.connection(true), cfg),
    );
    redis.worker<TimerData>(TIMERS_QUEUE, (job) => processTimer(job, reconcile), timersWorkerOptions(redis.connection(true), cfg));
    const admin = redis.connection(false);

    const producerErrors: unknown[] = [];
    let stop = false;
    let produced = 0;
    const producer = (async () => {
      for (let n = 0; !stop; n++, produced++) {
        try {
          await enqueue(reconcile, appKey(n % 30));
          if (n % 10 === 0) await setTimer(timers, appKey(n % 30), 'grace', Date.now() + 50);
        } catch (err) {
          producerErrors.push(err);
        }
        await sleepMs(1);
      }
    })();

    /** Flushes while a job runs and the producer goes on, then waits for `more` enqueues after the flush. */
    const flushDuringWork = async (more: number): Promise<void> => {
      const started = gate();
      const release = gate();
      holdNext = { started: started.open, release: release.promise };
      await started.promise;
      expect(await admin.flushall()).toBe('OK');
      release.open();
      const target = produced + more;
      await waitFor(() => (produced >= target ? true : undefined), { timeoutMs: 10_000, what: `${more} enqueues after the flush` });
    };
    await flushDuringWork(50);
    await flushDuringWork(50);
    stop = true;
    await producer;

    // Afterwards: fresh work on fresh keys is processed, both directly and through a timer.
    processed.clear();
    for (let i = 100; i < 110; i++) expect((await enqueue(reconcile, appKey(i))).outcome).not.toBe('skipped');
    await setTimer(timers, appKey(200), 'grace', Date.now() + 100);
    await waitFor(
      () => {
        const done = [...Array(10).keys()].every((i) => processed.has(dedupId(appKey(100 + i)))) && processed.has(dedupId(appKey(200)));
        return done ? true : undefined;
      },
      { timeoutMs: 10_000, what: 'work after FLUSHALL' },
    );
    // The flushes did hit running jobs (their completion found no job: reported as worker errors).
    expect(redis.workerErrors.length).toBeGreaterThan(0);
    expect(worker.isRunning()).toBe(true);
    // Producers saw at most a few failed calls around the flush, never a crash.
    expect(producerErrors.length).toBeLessThan(10);
  }, 30_000);
});
