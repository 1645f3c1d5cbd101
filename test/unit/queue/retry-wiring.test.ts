/** The retry policy as BullMQ applies it, against a real Redis. */
import { performance } from 'node:perf_hooks';
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { RECONCILE_QUEUE, type ObjectKey } from '../../../src/queue/names.ts';
import { reconcileWorkerOptions } from '../../../src/queue/queues.ts';
import { backoffStrategy, withRetryPolicy } from '../../../src/queue/retry.ts';
import { useRedis } from './support.ts';

const redis = useRedis();
const key: ObjectKey = { kind: 'App', namespace: 'ns', name: 'web' };

async function failedJob(queue: ReturnType<typeof redis.reconcileQueue>): Promise<Job<ObjectKey, unknown, string>> {
  return waitFor(async () => (await queue.getFailed())[0], { timeoutMs: 5_000, what: 'a failed job' });
}

describe('retry policy wiring', () => {
  it.each([
    ['403 through withRetryPolicy (UnrecoverableError)', true],
    ['403 thrown raw (the backoff strategy answers -1)', false],
  ])('does not retry %s', async (_what, wrapped) => {
    const cfg = redis.config({ EBB_QUEUE_ATTEMPTS: '5', EBB_QUEUE_BACKOFF_BASE: '10ms' });
    const queue = redis.reconcileQueue(cfg);
    let runs = 0;
    const fail = (): Promise<void> => {
      runs++;
      return Promise.reject(new KubeError('Forbidden', 403, 'pods is forbidden'));
    };
    redis.worker<ObjectKey>(RECONCILE_QUEUE, wrapped ? withRetryPolicy(fail) : fail, reconcileWorkerOptions(redis.connection(true), cfg));
    await enqueue(queue, key);
    const job = await failedJob(queue);
    expect(runs).toBe(1);
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toContain('forbidden');
    expect(await queue.getJobCounts('delayed', 'wait')).toEqual({ delayed: 0, wait: 0 });
  });

  it('retries a 409 at once', async () => {
    const cfg = redis.config({ EBB_QUEUE_BACKOFF_BASE: '10s', EBB_QUEUE_BACKOFF_MAX: '10s' });
    const queue = redis.reconcileQueue(cfg);
    const starts: number[] = [];
    redis.worker<ObjectKey>(
      RECONCILE_QUEUE,
      withRetryPolicy(() => {
        starts.push(performance.now());
        return starts.length < 3 ? Promise.reject(new KubeError('Conflict', 409, 'the object has been modified')) : Promise.resolve();
      }),
      reconcileWorkerOptions(redis.connection(true), cfg),
    );
    await enqueue(queue, key);
    await waitFor(async () => ((await queue.getCompletedCount()) === 1 ? true : undefined), { timeoutMs: 5_000, what: 'completion' });
    expect(starts).toHaveLength(3);
    expect(starts[2]! - starts[0]!).toBeLessThan(1_000);
  });

  it('backs off exponentially up to the cap, then fails after the configured attempts', async () => {
    const cfg = redis.config({ EBB_QUEUE_ATTEMPTS: '5' });
    const queue = redis.reconcileQueue(cfg);
    const starts: number[] = [];
    redis.worker<ObjectKey>(
      RECONCILE_QUEUE,
      withRetryPolicy(() => {
        starts.push(performance.now());
        return Promise.reject(new KubeError('ServerError', 500, 'etcdserver: request timed out'));
      }),
      // Deterministic upper bound of the jitter (random = 1): delay = min(400, 100 * 2^attempt).
      { ...reconcileWorkerOptions(redis.connection(true), cfg), settings: { backoffStrategy: backoffStrategy({ baseMs: 100, capMs: 400, random: () => 1 }) } },
    );
    await enqueue(queue, key);
    const job = await failedJob(queue);
    expect(job.attemptsMade).toBe(5);
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    // Uncapped, the last two gaps would be 800 and 1600 ms; scheduling adds latency, never removes delay.
    const expected = [200, 400, 400, 400];
    expect(gaps).toHaveLength(expected.length);
    gaps.forEach((gap, i) => {
      expect(gap, `gap ${i}`).toBeGreaterThanOrEqual(expected[i]! - 5);
      expect(gap, `gap ${i}`).toBeLessThan(expected[i]! + 350);
    });
  });
});
