/** A reconcile's lines in its job's log (Bull Board's Logs tab). */
import type { Job } from 'bullmq';
import { errorSummary } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';

/** Most lines a job's log gets, and most characters a line has: the reconciler bounds them too. */
export const MAX_JOB_LOG_LINES = 12;
export const MAX_JOB_LOG_LINE = 500;

/** Writes `lines` to `job`'s log; a lost line never fails the job. */
export async function writeJobLog(job: Pick<Job, 'log'>, lines: readonly string[], log: Logger): Promise<void> {
  try {
    for (const line of lines.slice(0, MAX_JOB_LOG_LINES)) await job.log(line.slice(0, MAX_JOB_LOG_LINE));
  } catch (err) {
    log.debug({ err: errorSummary(err) }, 'could not write the job log');
  }
}
