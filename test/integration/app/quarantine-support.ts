/** Reading quarantine's traces on the sandbox's Redis: the runs in flight, and the reconcile jobs that ended held. */
import type { RedisClient } from '../../../src/queue/connection.ts';
import { formatKey, type ObjectKey } from '../../../src/queue/names.ts';
import type { ReconcileQueue } from '../../../src/queue/queues.ts';

/** The keys in flight (`App ns/name` → runs begun and never ended) and, of those, the runs that ran alone. */
export async function inFlight(conn: RedisClient, prefix: string): Promise<{ runs: Map<string, number>; alone: Map<string, number> }> {
  const all = await conn.hgetall(`${prefix}:inflight`);
  const runs = new Map<string, number>();
  const alone = new Map<string, number>();
  for (const [field, count] of Object.entries(all)) {
    if (field.startsWith('alone ')) alone.set(field.slice('alone '.length), Number(count));
    else runs.set(field, Number(count));
  }
  return { runs, alone };
}

/** Reconcile jobs of `key` that ended held (summary `quarantined`) at or after `since` (epoch ms). */
export async function heldRunsSince(queue: ReconcileQueue, key: ObjectKey, since: number): Promise<number> {
  const id = formatKey(key);
  const jobs = await queue.getJobs(['completed'], 0, 500);
  return jobs.filter((j) => {
    const out = j.returnvalue as unknown;
    return formatKey(j.data) === id && (j.finishedOn ?? 0) >= since && typeof out === 'object' && out !== null && 'quarantined' in out;
  }).length;
}
