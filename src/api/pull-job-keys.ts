/**
 * The names an ImagePullJob's work is known by: the field manager of its ImageList entries, the label on the
 * ImageLists that hold them, and its conditions, reasons and Event reasons.
 */
import { createHash } from 'node:crypto';
import { GROUP } from './group.ts';
import type { ImagePullJobStatus } from './image-pull-job.ts';

const MANAGER_PREFIX = 'ebb-pulljob/';
const FIELD_MANAGER_MAX_LENGTH = 128;
const LABEL_NAME_MAX_LENGTH = 63;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const shortHash = (namespace: string, name: string): string => createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 16);

/**
 * The field manager of a job's ImageList entries: `ebb-pulljob/<namespace>/<name>`, so each job owns (and
 * removes) only its own entries. Hashed when longer than the apiserver allows (a job name may have 253 characters).
 */
export function pullJobFieldManager(namespace: string, name: string): string {
  const plain = `${MANAGER_PREFIX}${namespace}/${name}`;
  if (plain.length <= FIELD_MANAGER_MAX_LENGTH) return plain;
  const hash = shortHash(namespace, name);
  return `${plain.slice(0, FIELD_MANAGER_MAX_LENGTH - hash.length - 1)}-${hash}`;
}

/** The job a field manager belongs to; undefined when `manager` is not one, or is a hashed one. */
export function parsePullJobFieldManager(manager: string): { namespace: string; name: string } | undefined {
  if (!manager.startsWith(MANAGER_PREFIX) || manager.length >= FIELD_MANAGER_MAX_LENGTH) return undefined;
  const [namespace, name, ...rest] = manager.slice(MANAGER_PREFIX.length).split('/');
  if (namespace === undefined || name === undefined || rest.length > 0 || !DNS_LABEL.test(namespace) || !DNS_SUBDOMAIN.test(name)) return undefined;
  return { namespace, name };
}

/** ImageLists holding a job's entries carry the label `pulljob.apps.ebb.dev/<namespace>.<name>` (hashed when long). */
export const PULL_JOB_LABEL_PREFIX = `pulljob.${GROUP}/`;

/** The label key marking the ImageLists that hold a job's entries; the worker finds them with one LIST by it. */
export function pullJobLabelKey(namespace: string, name: string): string {
  const plain = `${namespace}.${name}`;
  if (plain.length <= LABEL_NAME_MAX_LENGTH && /[a-z0-9]$/.test(plain)) return `${PULL_JOB_LABEL_PREFIX}${plain}`;
  const hash = shortHash(namespace, name);
  return `${PULL_JOB_LABEL_PREFIX}${plain.slice(0, LABEL_NAME_MAX_LENGTH - hash.length - 1)}-${hash}`;
}

/** Condition types of `ImagePullJob.status.conditions` (as a batch Job's). */
export const PullJobCondition = {
  /** True once every selected node pulled the images or failed (completionPolicy Always). */
  complete: 'Complete',
  /** True once activeDeadlineSeconds passed before the job completed. */
  failed: 'Failed',
} as const;

export const PullJobReason = {
  /** Complete False: nodes are pulling or wait for a slot (parallelism). */
  inProgress: 'InProgress',
  /** Complete False for good: completionPolicy Never. */
  neverCompletes: 'NeverCompletes',
  /** Complete: every node pulled every image. */
  allPulled: 'AllNodesPulled',
  /** Complete: every node is done, some failed. */
  someFailed: 'SomeNodesFailed',
  /** Complete: the selector picks no node. */
  noNodes: 'NoNodesSelected',
  /** Failed: activeDeadlineSeconds passed. */
  deadlineExceeded: 'DeadlineExceeded',
} as const;

/** Event reasons on an ImagePullJob. */
export const PullJobEventReason = {
  started: 'Started',
  completed: 'Completed',
  deadlineExceeded: 'DeadlineExceeded',
  nodeFailed: 'NodePullFailed',
  /** ttlSecondsAfterFinished passed: the worker deletes the job. */
  deleting: 'TTLExpired',
} as const;

/** Whether a job is finished: condition Complete or Failed is True. */
export function isPullJobFinished(status: ImagePullJobStatus | undefined): boolean {
  return status?.conditions?.some((c) => (c.type === PullJobCondition.complete || c.type === PullJobCondition.failed) && c.status === 'True') === true;
}
