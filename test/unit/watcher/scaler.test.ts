import type { ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.ts';
import { dueSoonBacklog } from '../../../src/queue/backlog.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { METRIC_NAME, startScaler, threadBacklog } from '../../../src/watcher/scaler.ts';
import { useRedis } from '../queue/support.ts';
import { call, client } from './scaler-client.ts';

/** A StreamIsActive stream of `ref`: every answer it pushes, in order, and the first one's arrival. */
function openActiveStream(
  c: ReturnType<typeof client>,
  ref: object,
): { stream: ReturnType<ReturnType<typeof client>['StreamIsActive']>; seen: boolean[]; first: Promise<void> } {
  const seen: boolean[] = [];
  const stream = c.StreamIsActive(ref);
  const first = new Promise<void>((resolve) => stream.once('data', () => resolve()));
  stream.on('data', (m: { result: boolean }) => seen.push(m.result));
  stream.on('error', () => undefined);
  return { stream, seen, first };
}

describe('KEDA external scaler', () => {
  const redis = useRedis();
  const log = createLogger('test', 'silent');
  const ref = { name: 'ebb-worker', namespace: 'ebb-system', scalerMetadata: { jobsPerWorker: '20' } };

  it('reports the reconcile backlog, the target per worker, and 0 while the queue is paused', async () => {
    const queue = redis.reconcileQueue(redis.config());
    const scaler = await startScaler({ address: '127.0.0.1', port: 0, backlog: async () => (await dueSoonBacklog(queue, 30_000)).total, log });
    const c = client(scaler.port);
    try {
      expect(await call(c.IsActive, c, ref)).toEqual({ result: false });
      const spec = await call(c.GetMetricSpec, c, ref);
      expect(spec.metricSpecs[0]).toMatchObject({ metricName: METRIC_NAME, targetSize: 20 });
      for (const name of ['a', 'b', 'c']) await enqueue(queue, { kind: 'App', namespace: 'ns', name });
      expect(await call(c.IsActive, c, ref)).toEqual({ result: true });
      expect((await call(c.GetMetrics, c, { scaledObjectRef: ref, metricName: METRIC_NAME })).metricValues[0]).toMatchObject({
        metricName: METRIC_NAME,
        metricValue: 3,
      });
      await queue.pause();
      expect(await call(c.IsActive, c, ref)).toEqual({ result: false });
    } finally {
      c.close();
      await scaler.close();
    }
  });

  it('answers UNAVAILABLE without the error text when the backlog cannot be read', async () => {
    const backlog = (): Promise<number> => Promise.reject(new Error('NOAUTH secret-detail of redis://:hunter2@redis'));
    const scaler = await startScaler({ address: '127.0.0.1', port: 0, backlog, log });
    const c = client(scaler.port);
    try {
      const err = (await call(c.IsActive, c, ref).catch((e: unknown) => e)) as ServiceError;
      expect(err.code).toBe(14);
      expect(err.details).toBe('backlog unavailable');
    } finally {
      c.close();
      await scaler.close();
    }
  });

  it('pushes active on StreamIsActive the moment work is announced', async () => {
    let backlog = 0;
    // The periodic re-check is far away, so a push can only come from notify().
    const scaler = await startScaler({ address: '127.0.0.1', port: 0, backlog: () => Promise.resolve(backlog), log, recheckMs: 600_000 });
    const c = client(scaler.port);
    const { stream, seen, first } = openActiveStream(c, ref);
    try {
      await first;
      expect(seen).toEqual([false]);
      backlog = 1;
      const pushed = new Promise<void>((resolve) => stream.once('data', () => resolve()));
      scaler.notify();
      await pushed;
      expect(seen).toEqual([false, true]);
      scaler.notify();
      expect(seen).toEqual([false, true]);
    } finally {
      stream.cancel();
      c.close();
      await scaler.close();
    }
  });
  it('reads no backlog on an enqueue while every stream was already told active', async () => {
    let reads = 0;
    const backlog = (): Promise<number> => (reads++, Promise.resolve(1));
    const scaler = await startScaler({ address: '127.0.0.1', port: 0, backlog, log, recheckMs: 600_000 });
    const c = client(scaler.port);
    const stream = c.StreamIsActive(ref);
    try {
      await new Promise<void>((resolve) => stream.once('data', () => resolve()));
      stream.on('error', () => undefined);
      // Let the opening read settle (it records what the stream was told).
      await new Promise((resolve) => setImmediate(resolve));
      const before = reads;
      for (let i = 0; i < 100; i++) scaler.notify();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(reads - before, 'a burst of enqueues read nothing').toBe(0);
    } finally {
      stream.cancel();
      c.close();
      await scaler.close();
    }
  });

  it('re-checks by itself when a delayed job enters the due window, not on every tick', async () => {
    let reads = 0;
    let growsAt = Date.now() + 400;
    // Inactive until growsAt, active from then on; the idle tick is far away.
    const backlog = (): Promise<{ total: number; growsAt?: number }> => {
      reads++;
      return Promise.resolve(Date.now() >= growsAt ? { total: 1 } : { total: 0, growsAt });
    };
    const scaler = await startScaler({ address: '127.0.0.1', port: 0, backlog, log, recheckMs: 50, idleRecheckMs: 600_000 });
    const c = client(scaler.port);
    const seen: boolean[] = [];
    const stream = c.StreamIsActive(ref);
    try {
      const active = new Promise<number>((resolve) => stream.on('data', (m: { result: boolean }) => (seen.push(m.result), m.result && resolve(Date.now()))));
      stream.on('error', () => undefined);
      const at = await active;
      expect(seen).toEqual([false, true]);
      expect(at).toBeGreaterThanOrEqual(growsAt);
      expect(at - growsAt, 'pushed when the job entered the window').toBeLessThan(300);
      expect(reads, 'one read at open, one when the job entered the window').toBeLessThanOrEqual(3);
      growsAt = Infinity;
    } finally {
      stream.cancel();
      c.close();
      await scaler.close();
    }
  });

  it('pushes nothing on an enqueue while the queue is paused (the backlog is 0), and active once it is not', async () => {
    const queue = redis.reconcileQueue(redis.config());
    const scaler = await startScaler({
      address: '127.0.0.1',
      port: 0,
      backlog: async () => (await dueSoonBacklog(queue, 30_000)).total,
      log,
      recheckMs: 600_000,
    });
    const c = client(scaler.port);
    const { stream, seen, first } = openActiveStream(c, ref);
    try {
      await first;
      await queue.pause();
      await enqueue(queue, { kind: 'App', namespace: 'ns', name: 'a' });
      scaler.notify();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(seen, 'no wake-up for a paused queue').toEqual([false]);
      await queue.resume();
      const pushed = new Promise<void>((resolve) => stream.once('data', () => resolve()));
      scaler.notify();
      await pushed;
      expect(seen).toEqual([false, true]);
    } finally {
      stream.cancel();
      c.close();
      await scaler.close();
    }
  });

  it("leaves the watcher's worker thread its backlog: active and counted only past it, for each ScaledObject", async () => {
    let backlog = 0;
    let threadRuns = true;
    const leftToThread = (meta: Record<string, string> | undefined): number => (threadRuns ? threadBacklog(meta) : 0);
    const scaler = await startScaler({ address: '127.0.0.1', port: 0, backlog: () => Promise.resolve(backlog), log, recheckMs: 600_000, leftToThread });
    const c = client(scaler.port);
    // No threadBacklog: the thread is left jobsPerWorker (20); an explicit 0 leaves it nothing.
    const zero = { ...ref, name: 'eager', scalerMetadata: { jobsPerWorker: '20', threadBacklog: '0' } };
    const metric = async (r: object): Promise<number | undefined> =>
      (await call(c.GetMetrics, c, { scaledObjectRef: r, metricName: METRIC_NAME })).metricValues[0]?.metricValue;
    const { stream, seen, first } = openActiveStream(c, ref);
    try {
      await first;
      backlog = 20;
      expect(await call(c.IsActive, c, ref)).toEqual({ result: false });
      expect(await metric(ref)).toBe(0);
      expect(await call(c.IsActive, c, zero)).toEqual({ result: true });
      expect(await metric(zero)).toBe(20);
      scaler.notify();
      backlog = 25;
      expect(await call(c.IsActive, c, ref)).toEqual({ result: true });
      expect(await metric(ref)).toBe(5);
      const pushed = new Promise<void>((resolve) => stream.once('data', () => resolve()));
      scaler.notify();
      await pushed;
      expect(seen, "the stream was told active only past the thread's backlog").toEqual([false, true]);
      // The thread down (restarting): worker processes are asked for any backlog.
      threadRuns = false;
      backlog = 1;
      expect(await call(c.IsActive, c, ref)).toEqual({ result: true });
      expect(await metric(ref)).toBe(1);
    } finally {
      stream.cancel();
      c.close();
      await scaler.close();
    }
  });

  it('reads threadBacklog from the trigger metadata, else jobsPerWorker', () => {
    expect(threadBacklog({ jobsPerWorker: '300' })).toBe(300);
    expect(threadBacklog({ jobsPerWorker: '300', threadBacklog: '0' })).toBe(0);
    expect(threadBacklog({ jobsPerWorker: '300', threadBacklog: '1000' })).toBe(1000);
    expect(threadBacklog({ threadBacklog: '-1' })).toBe(50);
    expect(threadBacklog({ threadBacklog: ' ' })).toBe(50);
    expect(threadBacklog(undefined)).toBe(50);
  });
});
