/**
 * The periodic re-pull of `alwaysPull` ImageList entries, as a pure decision. The worker owns one field per
 * such entry, `pullRequestedAt`, through server-side apply with its own field manager; the daemon pulls again
 * when that time is later than the last pull it answered. Between requests, "not yet" is a timer.
 */
import { DEFAULT_REPULL_INTERVAL_SECONDS, type ImageListEntry, type ImageStatus } from '../../api/image-list.ts';

/** The field manager of the re-pull requests. */
export const REPULL_FIELD_MANAGER = 'ebb-repull';

/** Timers never fire sooner than this after a reconcile (a clock skew must not turn into a hot loop). */
const MIN_WAIT_MS = 1_000;

export interface RepullInput {
  entries: readonly ImageListEntry[];
  status: readonly ImageStatus[];
  /** Images whose entry the re-pull field manager owns today. */
  owned: ReadonlySet<string>;
  now: Date;
}

/** One entry of the re-pull manager's apply configuration. */
export interface RepullEntry {
  image: string;
  pullRequestedAt: string;
}

export interface RepullPlan {
  /** The whole configuration the re-pull manager applies; undefined when nothing changes. */
  apply: RepullEntry[] | undefined;
  /** Images that get a new pull request in this apply (for logs). */
  requested: string[];
  /** When the next entry falls due, if any is waiting. */
  waitMs: number | undefined;
}

/** metav1.Time has whole seconds; the request must still be later than the pull it asks to repeat. */
function rfc3339Seconds(at: Date): string {
  return new Date(Math.floor(at.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function time(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** A request the daemon has not answered yet: pullRequestedAt is later than what its status observed. */
export function requestOutstanding(entry: ImageListEntry, status: ImageStatus | undefined): boolean {
  const requested = time(entry.pullRequestedAt);
  if (requested === undefined) return false;
  const observed = time(status?.observedPullRequestedAt);
  return observed === undefined || observed < requested;
}

type EntryDecision = { kind: 'request' } | { kind: 'keep' } | { kind: 'wait'; ms: number } | { kind: 'idle' };

function decideEntry(entry: ImageListEntry, status: ImageStatus | undefined, nowMs: number): EntryDecision {
  if (requestOutstanding(entry, status)) return { kind: 'keep' };
  const lastPull = time(status?.lastPullTime);
  if (lastPull === undefined) {
    // Pulled with no pull time on record (present before the daemon saw it): start the cycle now.
    return status?.phase === 'Pulled' ? { kind: 'request' } : { kind: 'idle' };
  }
  const due = lastPull + (entry.repullIntervalSeconds ?? DEFAULT_REPULL_INTERVAL_SECONDS) * 1000;
  return due <= nowMs ? { kind: 'request' } : { kind: 'wait', ms: due - nowMs };
}

/**
 * Decides the re-pull manager's configuration: a fresh `pullRequestedAt` for each due alwaysPull entry, the
 * current value for the other alwaysPull entries it owns, and nothing for entries that are no longer
 * alwaysPull (applying without them releases them, so a person's removal of an entry is not undone).
 */
export function planRepull(input: RepullInput): RepullPlan {
  const nowMs = input.now.getTime();
  const byImage = new Map(input.status.map((s) => [s.image, s]));
  const desired: RepullEntry[] = [];
  const requested: string[] = [];
  let waitMs: number | undefined;
  for (const entry of input.entries) {
    if (entry.alwaysPull !== true) continue;
    const decision = decideEntry(entry, byImage.get(entry.image), nowMs);
    if (decision.kind === 'request') {
      requested.push(entry.image);
      desired.push({ image: entry.image, pullRequestedAt: rfc3339Seconds(input.now) });
      continue;
    }
    if (decision.kind === 'wait') waitMs = Math.min(waitMs ?? Infinity, Math.max(decision.ms, MIN_WAIT_MS));
    if (input.owned.has(entry.image) && entry.pullRequestedAt !== undefined) {
      desired.push({ image: entry.image, pullRequestedAt: entry.pullRequestedAt });
    }
  }
  const released = [...input.owned].some((image) => !desired.some((d) => d.image === image));
  return { apply: requested.length > 0 || released ? desired : undefined, requested, waitMs };
}
