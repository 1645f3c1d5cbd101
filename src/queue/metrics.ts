import { Gauge, type Registry } from 'prom-client';
import type { JobType, Queue } from 'bullmq';
import { shardOfQueue } from './queues.ts';

/** The job states exported as `ebb_queue_jobs{queue, shard, state}`. */
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

interface Scraped {
  labels: { queue: string; shard: string };
  counts: Record<QueueState, number> | undefined;
}

/**
 * Registers queue depth gauges that read `getJobCounts` on every scrape (no polling between scrapes):
 * `ebb_queue_jobs{queue,shard,state}` and `ebb_queue_up{queue,shard}` (0 when Redis could not be read; the
 * depth series of that queue are then absent rather than stale). `shard` is the queue shard ("0" without
 * sharding); sum by queue for the whole. One scrape reads each queue once.
 */
export function registerQueueMetrics(registry: Registry, queues: readonly CountableQueue[], opts: { timeoutMs?: number } = {}): void {
  const timeoutMs = opts.timeoutMs ?? 3_000;
  let inflight: Promise<Scraped[]> | undefined;
  // prom-client collects all metrics of a scrape concurrently: both gauges share one read.
  const scrape = (): Promise<Scraped[]> => {
    inflight ??= Promise.all(
      queues.map(async (queue) => ({
        labels: { queue: queue.name, shard: String(shardOfQueue(queue)) },
        counts: await withTimeout(queueCounts(queue), timeoutMs).catch(() => undefined),
      })),
    ).finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
  new Gauge({
    name: 'ebb_queue_jobs',
    help: 'Jobs in a queue shard by state, read from Redis at scrape time.',
    labelNames: ['queue', 'shard', 'state'] as const,
    registers: [registry],
    async collect() {
      const results = await scrape();
      this.reset();
      for (const { labels, counts } of results) {
        if (counts) for (const state of QUEUE_STATES) this.set({ ...labels, state }, counts[state]);
      }
    },
  });
  new Gauge({
    name: 'ebb_queue_up',
    help: 'Whether the last scrape could read the queue shard from Redis (1) or not (0).',
    labelNames: ['queue', 'shard'] as const,
    registers: [registry],
    async collect() {
      const results = await scrape();
      for (const { labels, counts } of results) this.set(labels, counts ? 1 : 0);
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
