import type { Queue } from 'bullmq';
import { reconcileJobId } from './job-id.ts';
import { dedupId, validateKey, type ObjectKey } from './names.ts';

export interface EnqueueOptions {
  /**
   * BullMQ priority, 0 (the default, the wait list) to MAX_PRIORITY; lower runs sooner. For a change it is
   * the tenant tier (`fairness.ts`), always below RESYNC_PRIORITY.
   */
  priority?: number;
  /**
   * false (the default) is a change: it pulls a job that waits out a retry backoff forward to now (like
   * client-go's Add of an item waiting in AddAfter), and raises a waiting job of the object to its priority.
   * true is background work (resync): it never replaces or delays pending work, so it is skipped when the
   * object already has a job.
   */
  background?: boolean;
}

/** The priority of background (resync) jobs: after every change, whatever its tenant tier. */
export const RESYNC_PRIORITY = 1000;

export type EnqueueResult =
  /** A new job was created. */
  | { outcome: 'added'; jobId: string }
  /** The object's pending job covers this change: it waits and will start later, or it is running and a
   *  follow-up run was recorded that BullMQ starts when it finishes. */
  | { outcome: 'merged'; jobId: string }
  /** Background enqueue while the object already has a job. */
  | { outcome: 'skipped'; jobId: string };

/** BullMQ's upper bound for priorities. */
export const MAX_PRIORITY = 2_097_152;

/**
 * Asks for one reconcile of `key`. The client-go workqueue guarantee, from BullMQ deduplication with
 * `keepLastIfActive` (one dedup key per object):
 * - at most one job per object runs (never two workers on one key), and at most one more waits;
 * - an enqueue while the object's job waits is merged into it (that job has not started, so it sees the
 *   change); an enqueue while it runs is stored and becomes a new job when the running one finishes, so a
 *   change during processing is processed after.
 * Dedup is not a lock: a worker that loses its job lock can overlap with the next; writes stay guarded by
 * resourceVersion preconditions.
 */
export async function enqueue(queue: Queue<ObjectKey, unknown, string>, key: ObjectKey, opts: EnqueueOptions = {}): Promise<EnqueueResult> {
  const data = validateKey(key);
  const background = opts.background ?? false;
  const priority = opts.priority ?? (background ? RESYNC_PRIORITY : 0);
  if (!Number.isSafeInteger(priority) || priority < 0 || priority > MAX_PRIORITY) {
    throw new RangeError(`priority must be an integer from 0 to ${MAX_PRIORITY}, got ${priority}`);
  }
  const id = dedupId(data);
  if (background) {
    const pending = await queue.getDeduplicationJobId(id);
    if (pending) return { outcome: 'skipped', jobId: pending };
  }
  // A fresh custom id tells a new job apart from a merge (BullMQ returns the existing job's id then).
  const jobId = reconcileJobId(data);
  const job = await queue.add(data.kind, data, {
    jobId,
    priority,
    deduplication: { id, keepLastIfActive: true, reschedule: !background },
  });
  if (job.id === jobId) return { outcome: 'added', jobId };
  const existing = job.id ?? '';
  if (!background) await promote(queue, existing, priority);
  return { outcome: 'merged', jobId: existing };
}

/**
 * A change merged into a waiting job of lower urgency (a resync job, or a job enqueued while its namespace
 * was busier) takes the change's priority: it must not wait behind background work or an older burst.
 */
async function promote(queue: Queue<ObjectKey, unknown, string>, jobId: string, priority: number): Promise<void> {
  const job = await queue.getJob(jobId);
  if (!job || (job.priority ?? 0) <= priority) return;
  try {
    await job.changePriority({ priority });
  } catch {
    // The job finished or was removed meanwhile: it started after this enqueue, or a newer one exists.
  }
}
