/**
 * What the daemon remembers per image of its ImageList, and the pure transitions that change it: spec sync,
 * runtime answers, pull start, success and failure. The status it reports is part of this memory.
 */
import { ImagePhase, type ImageListEntry, type ImageStatus } from '../api/image-list.ts';
import { backoffMs } from '../common/backoff.ts';
import type { RetryClass } from '../common/errors.ts';

export interface ImageMemory {
  readonly image: string;
  /** The entry as last synced from the spec. */
  entry: ImageListEntry;
  /** What the status reports for this image. */
  status: ImageStatus;
  /** The last ImageStatus answer; undefined until the runtime was asked (since start, or since the entry changed). */
  present: boolean | undefined;
  /** When the runtime last answered ImageStatus (ms since the epoch). */
  checkedAt: number | undefined;
  /** Consecutive failed runtime calls (pulls and lookups); drives the backoff. */
  failures: number;
  /** No runtime call before this time (ms since the epoch). */
  retryAt: number | undefined;
  /** The next pull starts a new `attempts` count (after a success, or a new pull request). */
  freshAttempts: boolean;
  /** The image's size when the runtime last held it; undefined until it was seen present. */
  sizeBytes?: number | undefined;
}

export interface BackoffOptions {
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/** The status message limit of the CRD. */
const MESSAGE_MAX = 4096;

export function clip(message: string): string {
  return message.length <= MESSAGE_MAX ? message : `${message.slice(0, MESSAGE_MAX - 1)}…`;
}

/** RFC 3339 with second precision, as Kubernetes writes timestamps. */
export function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Whether `requested` is a pull request later than the one last answered. */
export function isNewerRequest(requested: string | undefined, answered: string | undefined): boolean {
  if (!requested) return false;
  const r = Date.parse(requested);
  if (Number.isNaN(r)) return false;
  const a = answered ? Date.parse(answered) : NaN;
  return Number.isNaN(a) || r > a;
}

/** The fields of an entry that change how it is pulled; a change retries at once. */
function entryKey(e: ImageListEntry): string {
  return JSON.stringify([e.pullRequestedAt ?? null, e.pullSecret?.namespace ?? null, e.pullSecret?.name ?? null]);
}

/** Memory for an entry first seen, resuming from the status a previous daemon wrote (if any). */
export function newMemory(entry: ImageListEntry, observed: ImageStatus | undefined): ImageMemory {
  const status: ImageStatus = observed ? { ...observed, image: entry.image } : { image: entry.image, phase: ImagePhase.pending };
  // A pull that was running when the previous daemon stopped is not running now.
  if (status.phase === ImagePhase.pulling) status.phase = ImagePhase.pending;
  return {
    image: entry.image,
    entry,
    status,
    present: undefined,
    checkedAt: undefined,
    failures: 0,
    retryAt: undefined,
    freshAttempts: status.phase === ImagePhase.pulled,
  };
}

/**
 * Brings memory in line with the spec: new entries get memory, removed ones lose it (their images are
 * returned, so work on them is cancelled), and a changed entry (a new pull request, another pull secret)
 * is tried again at once, without waiting out an earlier backoff.
 */
export function syncEntries(memory: Map<string, ImageMemory>, entries: readonly ImageListEntry[], observed: readonly ImageStatus[]): string[] {
  const wanted = new Set<string>();
  const observedBy = new Map(observed.map((s) => [s.image, s]));
  for (const entry of entries) {
    wanted.add(entry.image);
    const m = memory.get(entry.image);
    if (!m) {
      memory.set(entry.image, newMemory(entry, observedBy.get(entry.image)));
      continue;
    }
    if (entryKey(m.entry) !== entryKey(entry)) {
      if (isNewerRequest(entry.pullRequestedAt, m.entry.pullRequestedAt)) m.freshAttempts = true;
      m.failures = 0;
      m.retryAt = undefined;
    }
    m.entry = entry;
  }
  const removed = [...memory.keys()].filter((image) => !wanted.has(image));
  for (const image of removed) memory.delete(image);
  return removed;
}

/** The entry cannot be pulled: its reference does not parse. */
export function markInvalid(m: ImageMemory, message: string): void {
  m.status = { image: m.image, phase: ImagePhase.failed, message: clip(message) };
}

/** ImageStatus answered. An image that was pulled and is gone (image garbage collection) goes back to Pending. */
export function markChecked(m: ImageMemory, found: { present: boolean; imageRef?: string | undefined; sizeBytes?: number | undefined }, now: number): void {
  m.present = found.present;
  if (found.present && found.sizeBytes !== undefined) m.sizeBytes = found.sizeBytes;
  m.checkedAt = now;
  m.failures = 0;
  m.retryAt = undefined;
  if (found.present && found.imageRef) m.status.imageRef = found.imageRef;
  // The runtime answers again: a message about an earlier lookup failure is stale (a pull failure's, or why a
  // pull waits for disk, is not).
  if (m.status.phase !== ImagePhase.failed && m.status.phase !== ImagePhase.deferred) delete m.status.message;
  if (!found.present && m.status.phase === ImagePhase.pulled) {
    m.status = { ...m.status, phase: ImagePhase.pending, message: 'image is no longer in the container runtime; pulling it again' };
  }
}

/** The image is present and nothing asks for a pull: it counts as pulled. */
export function markPresent(m: ImageMemory): void {
  const { message: _dropped, ...rest } = m.status;
  m.status = { ...rest, phase: ImagePhase.pulled };
}

/** A pull starts at `now`: its start time tells readers of the status how long it has been running. */
export function markPullStarted(m: ImageMemory, now: number): void {
  const attempts = (m.freshAttempts ? 0 : (m.status.attempts ?? 0)) + 1;
  m.freshAttempts = false;
  m.status = { ...m.status, phase: ImagePhase.pulling, attempts, pullStartTime: timestamp(now) };
}

/**
 * A pull that started at `started` finished at `now`; it answers the pull request that was in the spec when it
 * started. Its duration (to the millisecond) is what the worker plans pre-warming with.
 */
export function markPulled(m: ImageMemory, imageRef: string, answered: string | undefined, now: number, started: number): void {
  const { message: _dropped, ...rest } = m.status;
  m.status = { ...rest, phase: ImagePhase.pulled, imageRef, lastPullTime: timestamp(now), lastPullDurationMillis: Math.max(0, now - started) };
  if (answered) m.status.observedPullRequestedAt = answered;
  m.present = true;
  m.checkedAt = now;
  m.failures = 0;
  m.retryAt = undefined;
  m.freshAttempts = true;
}

/**
 * A runtime call failed. Retryable failures back off exponentially with jitter; the others wait the
 * longest backoff (the runtime or the registry may still change). A failed pull marks the image Failed; a
 * failed lookup only says why nothing happens.
 */
export function markFailed(
  m: ImageMemory,
  f: { message: string; retryClass: RetryClass; pull: boolean },
  now: number,
  b: BackoffOptions,
  random: () => number,
): void {
  m.failures++;
  const delay = f.retryClass !== 'permanent' ? backoffMs(m.failures - 1, b.backoffBaseMs, b.backoffMaxMs, random) : b.backoffMaxMs;
  m.retryAt = now + delay;
  m.status = f.pull ? { ...m.status, phase: ImagePhase.failed, message: clip(f.message) } : { ...m.status, message: clip(f.message) };
}

/**
 * A pull may not start: the image filesystem has no room for it (`disk.ts`). The status says why; the image is
 * not looked at again before `retryAt` (the next re-check), unless its entry changes. Then it is looked up
 * first: meanwhile the kubelet may have pulled it for a pod.
 */
export function markDeferred(m: ImageMemory, message: string, retryAt: number): void {
  m.status = { ...m.status, phase: ImagePhase.deferred, message: clip(message) };
  m.retryAt = retryAt;
  m.checkedAt = undefined;
}

/** A pull was cut short by the daemon stopping: the next daemon starts it again. */
export function markInterrupted(m: ImageMemory): void {
  m.status = { ...m.status, phase: ImagePhase.pending, message: 'pull interrupted: the node daemon stopped' };
}
