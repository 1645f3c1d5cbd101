import type { Job, Queue } from 'bullmq';
import type { RedisClient } from './connection.ts';
import { queueCounts, type QueueState } from './metrics.ts';
import { readOverrides, type LimitOverrides, type RateLimit } from './overrides.ts';

/** What `ebb queue status` reads of a queue; structural, so queues of any job type fit. */
export type InspectedQueue = Pick<
  Queue,
  'name' | 'getJobCounts' | 'isPaused' | 'getJobs' | 'getFailed' | 'getWorkersCount' | 'getGlobalConcurrency' | 'getGlobalRateLimit'
>;

export interface FailedJob {
  id: string;
  /** The job's payload as stored (for reconcile jobs, the object key). */
  data: unknown;
  attempts: number;
  /** When the last attempt failed (epoch ms); undefined when BullMQ did not record it. */
  failedAt: number | undefined;
  lastError: string;
}

export interface QueueStatus {
  name: string;
  paused: boolean;
  counts: Record<QueueState, number>;
  /** Enqueue time (epoch ms) of the oldest job waiting to start (`wait`, and `prioritized` as far as scanned). */
  oldestWaitingAt: number | undefined;
  /** The most recently failed jobs, newest first (at most the limit asked for). */
  failed: FailedJob[];
  /** Processes (workers) connected to the queue. */
  workers: number;
  /** What Redis holds now (all workers obey it). */
  globalConcurrency: number | null;
  globalRateLimit: RateLimit | null;
}

export interface ReadStatusOptions {
  /** How many failed jobs to list. */
  failedLimit: number;
  /** How many prioritized jobs to scan for the oldest enqueue time (they are ordered by priority, not age). */
  prioritizedScan?: number;
}

function oldest(jobs: readonly Pick<Job, 'timestamp'>[]): number | undefined {
  const times = jobs.map((j) => j.timestamp).filter((t) => Number.isFinite(t) && t > 0);
  return times.length ? Math.min(...times) : undefined;
}

/** One queue's status, read from Redis (no writes). */
export async function readQueueStatus(queue: InspectedQueue, opts: ReadStatusOptions): Promise<QueueStatus> {
  const scan = opts.prioritizedScan ?? 500;
  const [paused, counts, waiting, prioritized, failed, workers, globalConcurrency, rate] = await Promise.all([
    queue.isPaused(),
    queueCounts(queue),
    // The wait list's oldest job is its last one: ascending order returns it first.
    queue.getJobs(['wait'], 0, 0, true),
    scan > 0 ? queue.getJobs(['prioritized'], 0, scan - 1, true) : Promise.resolve([]),
    opts.failedLimit > 0 ? queue.getFailed(0, opts.failedLimit - 1) : Promise.resolve([]),
    queue.getWorkersCount(),
    queue.getGlobalConcurrency(),
    queue.getGlobalRateLimit(),
  ]);
  return {
    name: queue.name,
    paused,
    counts,
    oldestWaitingAt: oldest([...waiting, ...prioritized].filter(Boolean)),
    failed: failed.filter(Boolean).map((j) => ({
      id: j.id ?? '',
      data: j.data as unknown,
      attempts: j.attemptsMade,
      failedAt: j.finishedOn,
      lastError: j.failedReason || (j.stacktrace?.at(-1) ?? ''),
    })),
    workers,
    globalConcurrency,
    globalRateLimit: rate ? { max: rate.max, durationMs: rate.duration } : null,
  };
}

export interface Status {
  queues: QueueStatus[];
  /** The operator overrides of the reconcile queue's limits. */
  overrides: LimitOverrides;
  /** When it was read (epoch ms), for ages. */
  at: number;
}

/** The status of every queue and the operator overrides. */
export async function readStatus(queues: readonly InspectedQueue[], client: RedisClient, prefix: string, opts: ReadStatusOptions): Promise<Status> {
  const [list, overrides] = await Promise.all([Promise.all(queues.map((q) => readQueueStatus(q, opts))), readOverrides(client, prefix)]);
  return { queues: list, overrides, at: Date.now() };
}
