import type { Job, Queue } from 'bullmq';
import type { RedisClient } from './connection.ts';
import { queueCounts, type QueueState } from './metrics.ts';
import { readOverrides, type LimitOverrides, type RateLimit } from './overrides.ts';
import { shardOfQueue } from './queues.ts';
import { clusterSlot } from './shards.ts';

/** What `ebb queue status` reads of a queue; structural, so queues of any job type fit. */
export type InspectedQueue = Pick<
  Queue,
  'name' | 'qualifiedName' | 'getJobCounts' | 'isPaused' | 'getJobs' | 'getFailed' | 'getWorkersCount' | 'getGlobalConcurrency' | 'getGlobalRateLimit'
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
  /** The queue shard (0 without sharding) and the Redis Cluster slot its keys hash to. */
  shard: number;
  slot: number;
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
    shard: shardOfQueue(queue),
    slot: clusterSlot(queue.qualifiedName),
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
  /** Every queue of every shard (`totalsByQueue` adds the shards up). */
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

const sumOrNull = (values: readonly (number | null)[]): number | null =>
  values.every((v) => v !== null) ? values.reduce<number>((a, v) => a + (v ?? 0), 0) : null;

/**
 * Pure: the shards of each queue added up. Paused only when every shard is; the oldest waiting job of any
 * shard; failed jobs of all shards, newest first (as many as one shard lists); workers are the most any shard
 * has (every worker consumes every shard); limits the sum of the shards' shares. Shard and slot are -1.
 */
export function totalsByQueue(queues: readonly QueueStatus[]): QueueStatus[] {
  const names = [...new Set(queues.map((q) => q.name))];
  return names.map((name) => {
    const shards = queues.filter((q) => q.name === name);
    const counts = {} as Record<QueueState, number>;
    for (const q of shards) for (const [state, n] of Object.entries(q.counts) as [QueueState, number][]) counts[state] = (counts[state] ?? 0) + n;
    const oldestTimes = shards.map((q) => q.oldestWaitingAt).filter((t): t is number => t !== undefined);
    const limit = Math.max(0, ...shards.map((q) => q.failed.length));
    const rates = shards.map((q) => q.globalRateLimit);
    return {
      name,
      shard: -1,
      slot: -1,
      paused: shards.every((q) => q.paused),
      counts,
      oldestWaitingAt: oldestTimes.length ? Math.min(...oldestTimes) : undefined,
      failed: shards
        .flatMap((q) => q.failed)
        .sort((a, b) => (b.failedAt ?? 0) - (a.failedAt ?? 0))
        .slice(0, limit),
      workers: Math.max(0, ...shards.map((q) => q.workers)),
      globalConcurrency: sumOrNull(shards.map((q) => q.globalConcurrency)),
      globalRateLimit:
        rates.every((r) => r !== null) && rates[0] ? { max: rates.reduce((a, r) => a + (r?.max ?? 0), 0), durationMs: rates[0].durationMs } : null,
    };
  });
}
