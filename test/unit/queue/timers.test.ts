import type { Job } from 'bullmq';
import { describe, expect, it, vi } from 'vitest';
import { dueSoonBacklog } from '../../../src/queue/backlog.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { dedupId, TIMERS_QUEUE, timerId, type ObjectKey } from '../../../src/queue/names.ts';
import { timersWorkerOptions } from '../../../src/queue/queues.ts';
import { cancelTimer, processTimer, setTimer, type TimerData } from '../../../src/queue/timers.ts';
import { gate, useRedis } from './support.ts';

const redis = useRedis();
const key: ObjectKey = { kind: 'App', namespace: 'ns', name: 'web' };

async function pendingDueAt(queue: ReturnType<typeof redis.timersQueue>, reason: string): Promise<number | undefined> {
  const jobId = await queue.getDeduplicationJobId(timerId(key, reason));
  const job = jobId ? await queue.getJob(jobId) : undefined;
  return job?.data.dueAt;
}

describe('timers', () => {
  it('keep the earliest due time: a later set is ignored, an earlier set moves the timer', async () => {
    const cfg = redis.config();
    const timers = redis.timersQueue(cfg);
    const now = Date.now();

    expect(await setTimer(timers, key, 'grace', now + 10_000)).toBe('created');
    expect(await setTimer(timers, key, 'grace', now + 20_000)).toBe('kept');
    expect(await pendingDueAt(timers, 'grace')).toBe(now + 10_000);
    expect(await setTimer(timers, key, 'grace', now + 5_000)).toBe('moved-earlier');
    expect(await pendingDueAt(timers, 'grace')).toBe(now + 5_000);
    // One job per object and reason; another reason is another timer.
    expect(await timers.getDelayedCount()).toBe(1);
    expect(await setTimer(timers, key, 'canary-pause', now + 30_000)).toBe('created');
    expect(await timers.getDelayedCount()).toBe(2);
    // The delayed set agrees with the data: nothing is due within 4 s, the moved timer is due within 6 s.
    expect(await timers.getDelayedCount(now + 4_000)).toBe(0);
    expect(await timers.getDelayedCount(now + 6_000)).toBe(1);
  });

  it('are scheduled at their due time exactly, however much the clock moves while one is added', async () => {
    const timers = redis.timersQueue(redis.config());
    const dueAt = Date.now() + 10_000;
    // Every clock reading is 3 ms after the one before: a delay computed from one reading and a timestamp
    // taken from another would shift the job.
    let t = Date.now();
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => (t += 3));
    try {
      expect(await setTimer(timers, key, 'grace', dueAt)).toBe('created');
    } finally {
      clock.mockRestore();
    }
    // With a window of 0, the backlog grows when the earliest delayed job is due: the job's scheduled time.
    expect((await dueSoonBacklog(timers, 0, dueAt - 5_000)).growsAt).toBe(dueAt);
  });

  it('fire at the earliest due time and enqueue a reconcile of the object', async () => {
    const cfg = redis.config();
    const timers = redis.timersQueue(cfg);
    const reconcile = redis.reconcileQueue(cfg);
    const fired: number[] = [];
    redis.worker<TimerData>(
      TIMERS_QUEUE,
      async (job) => {
        fired.push(Date.now());
        await processTimer(job, reconcile);
      },
      timersWorkerOptions(redis.connection(true), cfg),
    );
    const due = Date.now() + 400;
    await setTimer(timers, key, 'grace', due + 60_000);
    expect(await setTimer(timers, key, 'grace', due)).toBe('moved-earlier');

    await waitFor(async () => ((await reconcile.getJobCounts('wait')).wait === 1 ? true : undefined), { timeoutMs: 5_000, what: 'the reconcile' });
    expect(fired).toHaveLength(1);
    expect(fired[0]!).toBeGreaterThanOrEqual(due - 5);
    expect(fired[0]!).toBeLessThan(due + 2_000);
    expect(await reconcile.getDeduplicationJobId(dedupId(key))).not.toBeNull();
    // Fired timers leave nothing behind: the next set creates a new timer.
    await waitFor(async () => ((await timers.getDeduplicationJobId(timerId(key, 'grace'))) === null ? true : undefined), {
      timeoutMs: 2_000,
      what: 'the timer to be released',
    });
    expect(await setTimer(timers, key, 'grace', Date.now() + 60_000)).toBe('created');
  });

  it('never swallow or postpone an event: a pending timer and a watch event are separate jobs', async () => {
    const cfg = redis.config();
    const timers = redis.timersQueue(cfg);
    const reconcile = redis.reconcileQueue(cfg);

    await setTimer(timers, key, 'grace', Date.now() + 60_000);
    expect((await enqueue(reconcile, key)).outcome).toBe('added');
    // The event is runnable now (waiting, not delayed), not when the timer fires.
    expect(await reconcile.getJobCounts('wait', 'delayed')).toEqual({ wait: 1, delayed: 0 });
    expect(await timers.getDelayedCount()).toBe(1);
  });

  it('a timer set while the same timer is firing becomes a new timer instead of being lost', async () => {
    const cfg = redis.config();
    const timers = redis.timersQueue(cfg);
    const reconcile = redis.reconcileQueue(cfg);
    const firing = gate();
    const release = gate();
    redis.worker<TimerData>(
      TIMERS_QUEUE,
      async (job: Job<TimerData, void, string>) => {
        firing.open();
        await release.promise;
        await processTimer(job, reconcile);
      },
      timersWorkerOptions(redis.connection(true), cfg),
    );
    await setTimer(timers, key, 'grace', Date.now());
    await firing.promise;

    expect(await setTimer(timers, key, 'grace', Date.now() + 60_000)).toBe('created');
    release.open();
    await waitFor(async () => ((await reconcile.getJobCounts('wait')).wait === 1 ? true : undefined), { timeoutMs: 5_000, what: 'the reconcile' });
    // The firing timer released only its own dedup slot: the new timer is still pending.
    expect(await timers.getDelayedCount()).toBe(1);
    expect(await pendingDueAt(timers, 'grace')).toBeGreaterThan(Date.now() + 50_000);
  });

  it('can be cancelled', async () => {
    const cfg = redis.config();
    const timers = redis.timersQueue(cfg);
    await setTimer(timers, key, 'grace', Date.now() + 60_000);
    expect(await cancelTimer(timers, key, 'grace')).toBe(true);
    expect(await cancelTimer(timers, key, 'grace')).toBe(false);
    expect(await timers.getDelayedCount()).toBe(0);
    expect(await setTimer(timers, key, 'grace', Date.now() + 60_000)).toBe('created');
  });

  it('concurrent sets of one timer still end at the earliest due time', async () => {
    const cfg = redis.config();
    const timers = redis.timersQueue(cfg);
    const base = Date.now() + 60_000;
    await setTimer(timers, key, 'grace', base + 50_000);
    const dues = Array.from({ length: 20 }, (_, i) => base + ((i * 7919) % 20) * 1_000);
    await Promise.all(dues.map((d) => setTimer(timers, key, 'grace', d)));
    expect(await pendingDueAt(timers, 'grace')).toBe(Math.min(...dues));
    expect(await timers.getDelayedCount()).toBe(1);
    expect(await timers.getDelayedCount(Math.min(...dues) + 1)).toBe(1);
  });
});
