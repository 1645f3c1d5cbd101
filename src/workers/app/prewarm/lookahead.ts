/**
 * How far ahead to pre-warm when `imagePrewarm.lookahead` is not set, measured rather than configured (pure):
 * far enough that each node's pull is expected to end before the rollout reaches that node.
 *
 *   lookahead = ceil(expected pull time × rollout pace) + 1
 *
 * - the expected pull time is the longest the daemons reported for this App's images on the nodes it asked
 *   (`lastPullDurationMillis` of a finished pull; a pull still running counts with the time it has run so far);
 * - the rollout pace is pods per second, from the times the updated pods last became Ready (their Ready
 *   condition's `lastTransitionTime`), over the last few: the longest gap among them is left out, so a pause or
 *   a pod updated long before does not make the rollout look slow;
 * - the one more pod is the margin: the pod the rollout reaches while a pull would just be finishing.
 *
 * Before both are measured (no pull of the new images has finished, fewer than two updated pods are Ready),
 * the answer is "every remaining pod": a pull started too early costs a share of the pull budget, which bounds
 * it anyway; a pull started too late costs a pod waiting for it. Each reconcile measures again.
 */
import { ImagePhase, type ImageList } from '../../../api/image-list.ts';
import type { Pod } from '../../../kube/types.ts';
import { getPodRevision, readyCondition } from '../pods/predicates.ts';

/** How many of the latest Ready transitions of updated pods the pace is taken over. */
export const PACE_WINDOW = 6;
/** Kubernetes timestamps have second precision: spans are never taken shorter than this. */
const MIN_SPAN_MS = 1_000;

const parseTime = (text: string | undefined): number | undefined => {
  const t = text === undefined ? NaN : Date.parse(text);
  return Number.isNaN(t) ? undefined : t;
};

/**
 * The expected pull time of `images` on a node in milliseconds, from the ImageLists this App wrote: the
 * longest finished pull, or a running one that already took longer. Undefined until one pull has finished.
 */
export function expectedPullMs(lists: readonly Pick<ImageList, 'status'>[], images: readonly string[], now: Date): number | undefined {
  const wanted = new Set(images);
  let finished: number | undefined;
  let running = 0;
  for (const list of lists) {
    for (const s of list.status?.images ?? []) {
      if (!wanted.has(s.image)) continue;
      if (s.phase === ImagePhase.pulled && s.lastPullDurationMillis !== undefined) finished = Math.max(finished ?? 0, s.lastPullDurationMillis);
      const started = parseTime(s.pullStartTime);
      if (s.phase === ImagePhase.pulling && started !== undefined) running = Math.max(running, now.getTime() - started);
    }
  }
  return finished === undefined ? undefined : Math.max(finished, running);
}

/**
 * Pods per second the rollout updates, from the Ready transitions of pods at `updateRevision`: over the
 * latest PACE_WINDOW of them, the pods per time between the first and the last, the longest gap left out.
 * Undefined until two updated pods are Ready.
 */
export function rolloutPace(pods: readonly Pod[], updateRevision: string): number | undefined {
  const times: number[] = [];
  for (const pod of pods) {
    if (getPodRevision(pod) !== updateRevision) continue;
    const ready = readyCondition(pod);
    const at = ready?.status === 'True' ? parseTime(ready.lastTransitionTime) : undefined;
    if (at !== undefined) times.push(at);
  }
  const window = times.sort((a, b) => a - b).slice(-PACE_WINDOW);
  if (window.length < 2) return undefined;
  const gaps = window.slice(1).map((t, i) => t - (window[i] ?? t));
  if (gaps.length === 1) return 1 / (Math.max(MIN_SPAN_MS, gaps[0] ?? 0) / 1000);
  const longest = Math.max(...gaps);
  const span = gaps.reduce((sum, g) => sum + g, 0) - longest;
  return (gaps.length - 1) / (Math.max(MIN_SPAN_MS, span) / 1000);
}

/**
 * The adaptive lookahead in pods, or undefined for "every remaining pod" (nothing measured yet). `pullMs`
 * and `podsPerSecond` as above.
 */
export function adaptiveLookahead(pullMs: number | undefined, podsPerSecond: number | undefined): number | undefined {
  if (pullMs === undefined || podsPerSecond === undefined) return undefined;
  return Math.ceil((pullMs / 1000) * podsPerSecond) + 1;
}
