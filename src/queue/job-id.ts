/**
 * The id of a reconcile job: `<dedupId>.<12 hex digits>` (a fresh suffix per job, so an enqueue can tell a
 * new job from a merge). A job whose id has another form, or whose payload names another object than its
 * id, was not made by ebb (a client that can write the queue's keys): workers drop it.
 */
import { randomBytes } from 'node:crypto';
import { InvalidKeyError, dedupId, keyFromDedupId, validateKey, type ObjectKey } from './names.ts';

const SUFFIX = /^(.+)\.([0-9a-f]{12})$/;

/** A new job id for `key`. */
export function reconcileJobId(key: ObjectKey): string {
  return `${dedupId(key)}.${randomBytes(6).toString('hex')}`;
}

/** The object of a job that ebb made (its id and payload agree), or undefined for any other job. */
export function ownJobKey(id: string | undefined, data: unknown): ObjectKey | undefined {
  const match = SUFFIX.exec(id ?? '');
  if (!match?.[1] || typeof data !== 'object' || data === null) return undefined;
  try {
    const fromId = keyFromDedupId(match[1]);
    const payload = validateKey(data as ObjectKey);
    return dedupId(payload) === match[1] ? fromId : undefined;
  } catch (err) {
    if (err instanceof InvalidKeyError) return undefined;
    throw err;
  }
}
