/**
 * The `measure` queue: web and Prometheus measurements a reconcile found due, each taken by a worker's measure
 * pool (`workers/measure`) instead of in the reconcile's slot. One job per due measurement, its id derived from
 * what is measured (`measureJobId`), so asking again while it waits or runs adds nothing. Unsharded, under the
 * queue prefix like the notify queue: a measurement is small and its result is read by id.
 */
import { Queue, type JobsOptions, type WorkerOptions } from 'bullmq';
import type { AnalysisCheck } from '../api/analysis.ts';
import type { RedisClient } from './connection.ts';
import { MEASURE_QUEUE } from './names.ts';
import type { QueueConfig } from './settings.ts';

/** What a measure job carries: the App, the run it measures for, the check as the App said it, and the query variables. */
export interface MeasureJob {
  namespace: string;
  name: string;
  uid: string;
  /** The update revision the measurement is for. */
  revision: string;
  /** The run's key in the analysis record (`<step>/<check>`). */
  key: string;
  /** When the measurement was due (the run's `nextMeasurementAt`, or its `startedAt` for the first). */
  due: string;
  check: AnalysisCheck;
  vars: Record<string, string>;
}

export type MeasureQueue = Queue<MeasureJob, void, string>;

/**
 * A job is removed once it ends, done or failed for good: its id is then free, so a reconcile that still finds
 * no result (Redis lost it, the job failed) asks again under the same id. A failure is a Redis error (the
 * measuring itself never fails: it is inconclusive), retried twice.
 */
export function measureJobOptions(): JobsOptions {
  return { attempts: 3, backoff: { type: 'exponential', delay: 1_000, jitter: 0.5 }, removeOnComplete: true, removeOnFail: true };
}

export function measureQueue(connection: RedisClient, cfg: Pick<QueueConfig, 'prefix'>): MeasureQueue {
  return new Queue<MeasureJob, void, string>(MEASURE_QUEUE, { connection, prefix: cfg.prefix, defaultJobOptions: measureJobOptions() });
}

/** The longest a measurement takes (the checks' timeout maximum) and a margin: how long a measure job holds its lease. */
export const MEASURE_LEASE_MS = 2 * 60_000 + 30_000;

/** Options of a worker's measure Worker: `concurrency`, its measure slots. */
export function measureWorkerOptions(connection: RedisClient, cfg: Pick<QueueConfig, 'prefix' | 'lockDurationMs'>, concurrency: number): WorkerOptions {
  return { connection, prefix: cfg.prefix, concurrency, lockDuration: cfg.lockDurationMs, stalledInterval: cfg.lockDurationMs, maxStalledCount: 1 };
}
