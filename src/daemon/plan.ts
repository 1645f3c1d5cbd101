/**
 * The daemon's pure planner: from the spec entries and what the daemon knows of each image, what to do
 * now and when to look again. No I/O and no clock: `now` is an input.
 */
import { ImagePhase, type ImageListEntry } from '../api/image-list.ts';
import { parseImageReference, type ImageReference } from '../api/image-ref.ts';
import { pullDeferral, type DiskReading } from './disk.ts';
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
  | { kind: 'pull'; image: string; ref: ImageReference; reason: PullReason }
  /** The image filesystem has no room for this pull: report Deferred with `message`, look again at the next re-check. */
  | { kind: 'defer'; image: string; message: string }
  /** Read the image filesystem's usage before any pull starts (no reading yet, or an old one). */
  | { kind: 'readDisk' };

/** The disk guard of pulls; absent: pulls are never held back for disk. */
export interface DiskInput {
  /** The last reading of the image filesystem (`image-fs.ts`); undefined: none taken yet. */
  reading: DiskReading | undefined;
  /** A reading is being taken now. */
  busy: boolean;
  /** At or above this used percent, no pull starts. */
  highPercent: number;
  /** A reading older than this is taken again before a pull starts. */
  freshMs: number;
}

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
  disk?: DiskInput | undefined;
}

export interface Plan {
  actions: Action[];
  /** When something becomes due (a backoff ends, a re-check is due); undefined: nothing timed. */
  wakeAt: number | undefined;
}

/** How an image filesystem reading bears on pulls now: read it first, or decide each pull with it. */
type DiskGate = { read: true } | { read: false; reading: DiskReading | undefined; highPercent: number };

function diskGate(input: PlanInput): DiskGate {
  const { disk, now } = input;
  if (!disk) return { read: false, reading: undefined, highPercent: 100 };
  const stale = disk.reading === undefined || now - disk.reading.at >= disk.freshMs;
  return stale ? { read: true } : { read: false, reading: disk.reading, highPercent: disk.highPercent };
}

/**
 * Why the pull waits for disk, or undefined. An image that the runtime held and that went away (its size is
 * known) brings that size back.
 */
function deferral(gate: DiskGate & { read: false }, m: ImageMemory): string | undefined {
  if (!gate.reading) return undefined;
  const returning = m.present === false && m.sizeBytes !== undefined ? m.sizeBytes : 0;
  return pullDeferral(gate.reading, gate.highPercent, returning);
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
 * free slots. With the disk guard, a pass that would pull reads the image filesystem first unless the last
 * reading is fresh; a pull the reading has no room for is reported Deferred instead, and tried again at the
 * next re-check.
 */
export function planImages(input: PlanInput): Plan {
  const actions: Action[] = [];
  let wakeAt: number | undefined;
  const pass: Pass = { pulls: input.pullSlots, checks: input.checkSlots, gate: diskGate(input), readDisk: false };
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
    const action = need.action && admit(need.action, m, pass);
    if (action) actions.push(action);
  }
  if (pass.readDisk && !input.disk?.busy) actions.push({ kind: 'readDisk' });
  return { actions, wakeAt };
}

/** What one pass has left: free slots, the disk guard, and whether a pull waits for a disk reading. */
interface Pass {
  pulls: number;
  checks: number;
  gate: DiskGate;
  readDisk: boolean;
}

/** The action to take within the pass's slots and disk guard (a pull may become a deferral), or undefined. */
function admit(action: Action, m: ImageMemory, pass: Pass): Action | undefined {
  if (action.kind === 'check') {
    if (pass.checks <= 0) return undefined;
    pass.checks--;
    return action;
  }
  if (action.kind !== 'pull') return action;
  if (pass.pulls <= 0) return undefined;
  if (pass.gate.read) {
    pass.readDisk = true;
    return undefined;
  }
  const why = deferral(pass.gate, m);
  if (why !== undefined) return { kind: 'defer', image: action.image, message: why };
  pass.pulls--;
  return action;
}
