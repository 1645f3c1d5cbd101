import type { Queue } from 'bullmq';

/** What the backlog needs of a queue; structural, so queues of any job type fit. */
export type BacklogQueue = Pick<Queue, 'isPaused' | 'getJobCounts' | 'getDelayedCount'>;

export interface Backlog {
  wait: number;
  prioritized: number;
  active: number;
  /** Delayed jobs (retry backoffs; on the timers queue, timers) due before now + window. */
  delayedDueSoon: number;
  paused: boolean;
  /** What the KEDA scaler reports: the sum of the above, or 0 when the queue is paused. */
  total: number;
}

/**
 * The "due soon" backlog of a queue for the KEDA external scaler. BullMQ promotes delayed jobs only inside
 * a running Worker, so counting `wait` alone would strand retries at zero workers: delayed jobs due within
 * `windowMs` count too. A paused queue reports 0 so KEDA scales its workers to zero.
 */
export async function dueSoonBacklog(queue: BacklogQueue, windowMs: number, now: number = Date.now()): Promise<Backlog> {
  const [paused, counts, delayedDueSoon] = await Promise.all([
    queue.isPaused(),
    queue.getJobCounts('wait', 'prioritized', 'active'),
    // Counts jobs scheduled strictly before the cutoff.
    queue.getDelayedCount(Math.floor(now + Math.max(0, windowMs)) + 1),
  ]);
  const wait = counts.wait ?? 0;
  const prioritized = counts.prioritized ?? 0;
  const active = counts.active ?? 0;
  const total = paused ? 0 : wait + prioritized + active + delayedDueSoon;
  return { wait, prioritized, active, delayedDueSoon, paused, total };
}
