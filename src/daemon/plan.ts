/**
 * The daemon's pure planner: from the spec entries and what the daemon knows of each image, what to do
 * now and when to look again. No I/O and no clock: `now` is an input.
 */
import { ImagePhase, type ImageListEntry } from '../api/image-list.ts';
import { parseImageReference, type ImageReference } from '../api/image-ref.ts';
import { clip, isNewerRequest, type ImageMemory } from './state.ts';

/**
 * Why an image is pulled: `requested` (spec pullRequestedAt is newer than the request last answered; an
 * alwaysPull re-pull is such a request, made by the worker when repullIntervalSeconds have passed) or
 * `absent` (not in the runtime, including an image it pulled that went away).
 */
export type PullReason = 'requested' | 'absent';

export type Action =
  /** The reference does not parse: report Failed; the runtime never sees it. */
  | { kind: 'invalid'; image: string; message: string }
  /** Ask the runtime whether it holds the image (ImageStatus). */
  | { kind: 'check'; image: string }
  /** The image is present and nothing asks for a pull: report Pulled. */
  | { kind: 'present'; image: string }
  | { kind: 'pull'; image: string; ref: ImageReference; reason: PullReason };

export interface PlanInput {
  entries: readonly ImageListEntry[];
  memory: ReadonlyMap<string, ImageMemory>;
  /** Images with a runtime call in flight: nothing else starts for them. */
  busy: ReadonlySet<string>;
  /** Pulls and lookups that may start now (free slots). */
  pullSlots: number;
  checkSlots: number;
  now: number;
  recheckPeriodMs: number;
}

export interface Plan {
  actions: Action[];
  /** When something becomes due (a backoff ends, a re-check is due); undefined: nothing timed. */
  wakeAt: number | undefined;
}

/** What one entry needs next, ignoring slots; `at` is when it is due when that is later than now. */
type Need = { action: Action; at?: undefined } | { action?: undefined; at: number } | { action?: undefined; at?: undefined };

/** The status message of an invalid entry, as stored (clipped to the CRD limit, so it compares equal). */
export function invalidMessage(image: string, reason: string): string {
  return clip(`invalid image reference ${JSON.stringify(image)}: ${reason}`);
}

export function pullReason(entry: ImageListEntry, m: ImageMemory): PullReason | undefined {
  if (isNewerRequest(entry.pullRequestedAt, m.status.observedPullRequestedAt)) return 'requested';
  return m.present === false ? 'absent' : undefined;
}

/** The next step for one entry that has memory, no call in flight and a reference that parses. */
function needOf(entry: ImageListEntry, ref: ImageReference, m: ImageMemory, input: PlanInput): Need {
  const { now } = input;
  if (m.retryAt !== undefined && now < m.retryAt) return { at: m.retryAt };
  // Always ask the runtime first: a fresh daemon (or a changed entry) knows nothing of the node yet.
  if (m.checkedAt === undefined) return { action: { kind: 'check', image: entry.image } };
  const reason = pullReason(entry, m);
  if (reason) return { action: { kind: 'pull', image: entry.image, ref, reason } };
  if (m.status.phase !== ImagePhase.pulled) return { action: { kind: 'present', image: entry.image } };
  const recheckAt = m.checkedAt + input.recheckPeriodMs;
  return now >= recheckAt ? { action: { kind: 'check', image: entry.image } } : { at: recheckAt };
}

/**
 * Plans one pass over the entries, in spec order: invalid references are reported Failed (once); every
 * other image is looked up in the runtime first, then pulled when absent or when a newer pull is requested;
 * pulled images are looked up again every recheck period. Images with a call in
 * flight are skipped (never two calls for one image), and no more pulls and lookups start than there are
 * free slots.
 */
export function planImages(input: PlanInput): Plan {
  const actions: Action[] = [];
  let wakeAt: number | undefined;
  let pulls = input.pullSlots;
  let checks = input.checkSlots;
  const wake = (at: number): void => void (wakeAt = wakeAt === undefined ? at : Math.min(wakeAt, at));
  for (const entry of input.entries) {
    const m = input.memory.get(entry.image);
    if (!m) continue;
    const parsed = parseImageReference(entry.image);
    if (!parsed.ok) {
      const message = invalidMessage(entry.image, parsed.reason);
      if (m.status.phase !== ImagePhase.failed || m.status.message !== message) actions.push({ kind: 'invalid', image: entry.image, message });
      continue;
    }
    if (input.busy.has(entry.image)) continue;
    const need = needOf(entry, parsed.ref, m, input);
    if (need.at !== undefined) wake(need.at);
    const action = need.action;
    if (!action) continue;
    if (action.kind === 'pull') {
      if (pulls <= 0) continue;
      pulls--;
    } else if (action.kind === 'check') {
      if (checks <= 0) continue;
      checks--;
    }
    actions.push(action);
  }
  return { actions, wakeAt };
}
