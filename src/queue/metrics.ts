import { Gauge, type Registry } from 'prom-client';
import type { JobType, Queue } from 'bullmq';

/** The job states exported as `ebb_queue_jobs{queue, state}`. */
export const QUEUE_STATES = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

/** What metrics need of a queue; structural, so queues of any job type fit. */
export type CountableQueue = Pick<Queue, 'name' | 'getJobCounts'>;

/** Reads the job counts of one queue, every state present (0 when empty). */
export async function queueCounts(queue: CountableQueue): Promise<Record<QueueState, number>> {
  const counts = await queue.getJobCounts(...(QUEUE_STATES as readonly JobType[]));
  const out = {} as Record<QueueState, number>;
  for (const state of QUEUE_STATES) out[state] = counts[state] ?? 0;
  return out;
}

/**
 * Registers queue depth gauges that read `getJobCounts` on every scrape (no polling between scrapes):
 * `ebb_queue_jobs{queue,state}` and `ebb_queue_up{queue}` (0 when Redis could not be read; the depth series
 * of that queue are then absent rather than stale). One scrape reads each queue once.
 */
export function registerQueueMetrics(registry: Registry, queues: readonly CountableQueue[], opts: { timeoutMs?: number } = {}): void {
  const timeoutMs = opts.timeoutMs ?? 3_000;
  let inflight: Promise<Map<string, Record<QueueState, number> | undefined>> | undefined;
  // prom-client collects all metrics of a scrape concurrently: both gauges share one read.
  const scrape = (): Promise<Map<string, Record<QueueState, number> | undefined>> => {
    inflight ??= Promise.all(queues.map(async (queue) => [queue.name, await withTimeout(queueCounts(queue), timeoutMs).catch(() => undefined)] as const))
      .then((entries) => new Map(entries))
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };
  new Gauge({
    name: 'ebb_queue_jobs',
    help: 'Jobs in a queue by state, read from Redis at scrape time.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      const results = await scrape();
      this.reset();
      for (const [queue, counts] of results) {
        if (counts) for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state]);
      }
    },
  });
  new Gauge({
    name: 'ebb_queue_up',
    help: 'Whether the last scrape could read the queue from Redis (1) or not (0).',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      const results = await scrape();
      for (const [queue, counts] of results) this.set({ queue }, counts ? 1 : 0);
    },
  });
}

/** A scrape must answer within Prometheus' timeout even while Redis is unreachable. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
