/**
 * The identity of one due measurement: the App (by uid, so a re-created App never reads its namesake's
 * results), the update revision, the run (`<step>/<check>`), when the measurement was due, and the check as
 * the App defines it (an edit of the check is a new measurement). Every re-plan of the same due measurement
 * finds the same id, because each part is read from what is stored: a run's `nextMeasurementAt`, or for its
 * first measurement its `startedAt` (a check's run is recorded before its first measurement is asked for,
 * `book.ts`). A run started again (an abort retried, a new revision) has a new `startedAt`: a new id.
 */
import { createHash } from 'node:crypto';
import type { MeasureJob } from '../../queue/measure-queue.ts';
import { InvalidKeyError, validateKey } from '../../queue/names.ts';

/** `Measure.<namespace>.<name>.<32 hex digits>`; the hash covers every part, the names are there to be read. */
export function measureJobId(job: Omit<MeasureJob, 'vars'>): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([job.uid, job.revision, job.key, job.due, job.check]))
    .digest('hex')
    .slice(0, 32);
  return `Measure.${job.namespace}.${job.name}.${hash}`;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The job's payload when ebb made it (well-formed, and its id is the one its payload gives), else undefined:
 * a job written by any other client of the queue's keys is dropped, never measured.
 */
export function ownMeasureJob(id: string | undefined, data: unknown): MeasureJob | undefined {
  if (!isRecord(data)) return undefined;
  const { namespace, name, uid, revision, key, due, check, vars } = data;
  const strings = [namespace, name, uid, revision, key, due];
  if (!strings.every((s) => typeof s === 'string') || !isRecord(check) || !isRecord(vars)) return undefined;
  if (!Object.values(vars).every((v) => typeof v === 'string')) return undefined;
  try {
    validateKey({ kind: 'App', namespace: namespace as string, name: name as string });
  } catch (err) {
    if (err instanceof InvalidKeyError) return undefined;
    throw err;
  }
  const job = data as unknown as MeasureJob;
  return measureJobId(job) === id ? job : undefined;
}
