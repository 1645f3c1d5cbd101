/**
 * The watch source of ImagePullJobs (tracked; a job is settled once finished) and the open jobs a Node change
 * re-enqueues (`node-source.ts`): a node that joins, leaves or changes its labels may be selected, or no longer,
 * by a job that is not finished, a completionPolicy Never job above all.
 */
import { imagePullJobRef } from '../api/group.ts';
import type { ImagePullJobStatus } from '../api/image-pull-job.ts';
import { isPullJobFinished } from '../api/pull-job-keys.ts';
import { parseKey, type ObjectKey } from '../queue/names.ts';
import { imagePullJobKey } from './keys.ts';
import type { SourceSpec } from './source-spec.ts';

/** The source names of the ImagePullJob watches (`imagepulljobs`, `imagepulljobs/<namespace>`). */
export const PULL_JOB_SOURCE = 'imagepulljobs';
export const isPullJobSource = (source: string): boolean => source === PULL_JOB_SOURCE || source.startsWith(`${PULL_JOB_SOURCE}/`);

/** Where the open jobs come from: the known keys last seen not settled (a job is settled once finished). */
export interface OpenJobs {
  unsettledWhere(source: (name: string) => boolean): string[];
}

export function openPullJobs(known: OpenJobs): ObjectKey[] {
  return known.unsettledWhere(isPullJobSource).map(parseKey);
}

/** The ImagePullJobs of one namespace (all when undefined). Their status is ebb's own output: status-only events bring nothing. */
export function pullJobSource(namespace: string | undefined): SourceSpec {
  return {
    name: namespace ? `${PULL_JOB_SOURCE}/${namespace}` : PULL_JOB_SOURCE,
    ref: imagePullJobRef(namespace),
    keyOf: imagePullJobKey,
    tracked: true,
    ignoreStatusOnly: true,
    settledOf: (o) => isPullJobFinished((o as { status?: ImagePullJobStatus }).status),
  };
}
