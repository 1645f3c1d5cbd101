/**
 * The limits of one App's pre-warming (pure), so that it never costs a node more than it helps:
 *
 * - at most `maxImagesPerNode` of its images on any node (the first ones in sorted order; the status says how
 *   many were left out);
 * - a rollout that has waited longer than `pinMaxMs` stops pinning its images: its entries are removed, so the
 *   kubelet's image garbage collection may reclaim them (the daemon pulls back an image it collected only for
 *   as long as an entry lists it). The clock is the App's `Paused` condition: True since its
 *   `lastTransitionTime` (a `rollingUpdate.paused` rollout, or a canary pause step). When the wait ends the
 *   condition changes, and the images are requested again for the pods still to update;
 * - a node requested `answerTimeoutMs` ago whose daemon reported none of the images (no daemon on the node, or
 *   one that is down) no longer counts as pulling: it gives its `parallelism` slot and its share of the
 *   cluster's pull budget back. Its entries stay; a daemon that answers later is counted again. The request
 *   time is an annotation the App writes with its entries (same key as its label), so any worker reads it.
 *
 * Every clock is read off the objects (`now` is an input): the same objects give the same decision.
 */
import type { AppStatus } from '../../../api/app-status.ts';
import type { ImageList } from '../../../api/image-list.ts';
import { ConditionType } from '../../../api/keys.ts';
import type { ClusterStored } from '../../../kube/types.ts';
import type { PrewarmPolicy } from '../model/prewarm-policy.ts';

const parseTime = (text: string | undefined): number | undefined => {
  const t = text === undefined ? NaN : Date.parse(text);
  return Number.isNaN(t) ? undefined : t;
};

/** RFC 3339 with second precision, as Kubernetes writes timestamps. */
export const timestamp = (at: Date): string => at.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The images to request, and how many the cap left out. */
export function cappedImages(images: readonly string[], max: number): { images: string[]; left: number } {
  const sorted = [...images].sort();
  return { images: sorted.slice(0, max), left: Math.max(0, sorted.length - max) };
}

/** When the rollout began to wait (the App's `Paused` condition True), as read; undefined while it is not paused. */
export function waitingSince(status: AppStatus | undefined): number | undefined {
  const paused = status?.conditions?.find((c) => c.type === ConditionType.paused);
  return paused?.status === 'True' ? parseTime(paused.lastTransitionTime) : undefined;
}

/** When the pins of a rollout waiting since `since` end, or undefined when they do not (not waiting, no limit). */
export function pinsEndAt(since: number | undefined, policy: PrewarmPolicy): number | undefined {
  return since === undefined || policy.pinMaxMs <= 0 ? undefined : since + policy.pinMaxMs;
}

/** When the App asked `list`'s node for its images (its annotation); undefined when it does not say. */
export function requestedAt(list: ClusterStored<ImageList>, labelKey: string): number | undefined {
  return parseTime(list.metadata.annotations?.[labelKey]);
}

/**
 * When `list`'s daemon is overdue unless it reports one of `images` first: `answerTimeoutMs` after the request.
 * Undefined when it reported one already, when there is no timeout, or no request time (it cannot be told).
 */
export function answerDueAt(list: ClusterStored<ImageList>, images: readonly string[], labelKey: string, policy: PrewarmPolicy): number | undefined {
  if (policy.answerTimeoutMs <= 0) return undefined;
  const at = requestedAt(list, labelKey);
  const reported = new Set((list.status?.images ?? []).map((s) => s.image));
  return at === undefined || images.some((image) => reported.has(image)) ? undefined : at + policy.answerTimeoutMs;
}

/** Whether `list`'s daemon is overdue at `now` (`answerDueAt` passed). */
export function unanswered(list: ClusterStored<ImageList>, images: readonly string[], labelKey: string, now: number, policy: PrewarmPolicy): boolean {
  const due = answerDueAt(list, images, labelKey, policy);
  return due !== undefined && now >= due;
}
