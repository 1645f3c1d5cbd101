import { randomBytes } from 'node:crypto';
import type { Job, Queue } from 'bullmq';
import { enqueue } from './enqueue.ts';
import { withKeyLock } from './key-lock.ts';
import { timerId, validateKey, type ObjectKey, type TimerData } from './names.ts';
import { connectionOf } from './queues.ts';
import { toJobError } from './retry.ts';

export type { TimerData } from './names.ts';

export type SetTimerResult = 'created' | 'moved-earlier' | 'kept';

type TimersQueueLike = Queue<TimerData, unknown, string>;
type ReconcileQueueLike = Queue<ObjectKey, unknown, string>;

const MAX_ROUNDS = 5;

/**
 * Sets the timer `(key, reason)` to fire at `dueAt` (epoch ms), keeping the EARLIEST due time like
 * client-go's AddAfter: an existing later timer is moved earlier, an earlier (or already due) one is kept.
 * One delayed job per object and reason, deduplicated by timerId on the timers queue, so a timer never
 * shares a dedup slot with watch events (those live on the reconcile queue). The read-compare-move runs
 * under a short Redis lock per timer id when the queue came from createTimersQueue.
 */
export async function setTimer(queue: TimersQueueLike, key: ObjectKey, reason: string, dueAt: number): Promise<SetTimerResult> {
  if (!Number.isFinite(dueAt)) throw new RangeError(`dueAt must be a finite epoch time in ms, got ${dueAt}`);
  const data: TimerData = { key: validateKey(key), reason, dueAt: Math.round(dueAt) };
  const id = timerId(data.key, reason);
  return locked(queue, id, () => setTimerUnlocked(queue, id, data));
}

async function setTimerUnlocked(queue: TimersQueueLike, id: string, data: TimerData): Promise<SetTimerResult> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const jobId = `${id}.${randomBytes(6).toString('hex')}`;
    // BullMQ schedules a delayed job at its `timestamp` + `delay`: both from one clock reading, so the job is
    // due at `dueAt` exactly (its own Date.now() a moment later would shift it by the time in between).
    const now = Date.now();
    const job = await queue.add(data.reason, data, { jobId, timestamp: now, delay: Math.max(0, data.dueAt - now), deduplication: { id } });
    if (job.id === jobId) return 'created';
    const existing = await queue.getJob(job.id ?? '');
    if (!existing) continue; // finished meanwhile: add again
    const state = await existing.getState();
    if (state === 'waiting' || state === 'prioritized') return 'kept'; // due now, so earlier than ours
    if (state === 'delayed') {
      if (existing.data.dueAt <= data.dueAt) return 'kept';
      await existing.updateData({ ...existing.data, dueAt: data.dueAt });
      try {
        // changeDelay takes its own clock reading: the moved job may be due a millisecond or two after dueAt.
        await existing.changeDelay(Math.max(0, data.dueAt - Date.now()));
        return 'moved-earlier';
      } catch {
        continue; // it became due meanwhile: the next round sees it waiting
      }
    }
    // Active (firing right now) or finished: it no longer represents a future firing. Release its dedup
    // slot (only if it still holds it) and add ours in the next round.
    await existing.removeDeduplicationKey();
  }
  throw new Error(`setTimer ${id}: the timer kept changing under us; giving up after ${MAX_ROUNDS} rounds`);
}

/** Cancels a pending timer; true if one was removed. A timer that is firing right now is not stopped. */
export async function cancelTimer(queue: TimersQueueLike, key: ObjectKey, reason: string): Promise<boolean> {
  const id = timerId(validateKey(key), reason);
  return locked(queue, id, async () => {
    const jobId = await queue.getDeduplicationJobId(id);
    const job = jobId ? await queue.getJob(jobId) : undefined;
    if (!job) return false;
    const state = await job.getState();
    if (state !== 'delayed' && state !== 'waiting' && state !== 'prioritized') return false;
    try {
      await job.remove(); // also deletes the dedup key
      return true;
    } catch {
      return false; // picked up by the timers worker meanwhile
    }
  });
}

/**
 * The timers Worker's processor (run by the watcher, so timers fire even with zero workers): releases the
 * timer's dedup slot first, so a timer set from now on creates a new job instead of merging into this
 * firing one, then enqueues a reconcile of the object (merged with any pending one, like any event), at the
 * priority `priorityOf` gives its namespace (tenant fairness; 0 without it).
 */
export async function processTimer(
  job: Job<TimerData, unknown, string>,
  reconcileQueue: ReconcileQueueLike,
  priorityOf: (key: ObjectKey) => number = () => 0,
): Promise<void> {
  try {
    await job.removeDeduplicationKey();
    const key = validateKey(job.data.key);
    await enqueue(reconcileQueue, key, { priority: priorityOf(key) });
  } catch (err) {
    // A malformed payload fails at once; a Redis hiccup is retried by the timers queue's job options.
    throw toJobError(err, job.attemptsMade + 1);
  }
}

function locked<T>(queue: TimersQueueLike, id: string, fn: () => Promise<T>): Promise<T> {
  const client = connectionOf(queue);
  return client ? withKeyLock(client, `${queue.toKey('ebb-lock')}:${id}`, fn) : fn();
}
