/**
 * The invariants the scenario harness holds every App rollout to, as pure checks over two views of the pods
 * (before and after one reconcile), and the log that turns the first breach into a failed test. A test that
 * injects a breach on purpose names the invariant and says why (`Scenario.allowInvariantBreaches`); every
 * other breach fails the step it happened in.
 */
export type InvariantName =
  /** One pod per ordinal, each with its own pod-index label. */
  | 'identity'
  /** OrderedReady: a pod is created only once every lower ordinal in range is available. */
  | 'ordering'
  /** A gated pod under an in-place update has its readiness gate False. */
  | 'gate'
  /** While paused, no healthy pod in range is deleted or starts an in-place update. */
  | 'paused'
  /** A reconcile takes an available pod out of service only within the App's (or the armed) maxUnavailable. */
  | 'maxUnavailable'
  /** Pods below the armed partition keep their UID, revision and images. */
  | 'partition';

export interface PodView {
  uid: string;
  name: string;
  ordinal: number;
  revision: string | undefined;
  terminating: boolean;
  failed: boolean;
  /** Running, ready for minReadySeconds, not under an in-place update nor held by a lifecycle state. */
  available: boolean;
  /** An in-place update is under way (state annotation, or gate False with StartInPlaceUpdate). */
  updating: boolean;
  images: string;
}

export interface Found {
  invariant: InvariantName;
  pod: string | undefined;
  detail: string;
}

export interface Breach extends Found {
  /** The step it happened in (1 is the first); a breach between steps counts towards the next one. */
  step: number;
}

export class InvariantBreachError extends Error {
  readonly breach: Breach;

  constructor(breach: Breach) {
    super(
      `invariant '${breach.invariant}' breached at step ${breach.step}${breach.pod ? ` (pod ${breach.pod})` : ''}: ${breach.detail}` +
        ` — a test that injects this breach on purpose says so with allowInvariantBreaches(['${breach.invariant}'], reason)`,
    );
    this.name = 'InvariantBreachError';
    this.breach = breach;
  }
}

/** Every breach, in order; the first one no opt-out covers is thrown by `raise`. */
export class BreachLog {
  readonly breaches: Breach[] = [];
  private readonly allowed = new Map<InvariantName, string>();
  private unraised: Breach | undefined;

  allow(names: readonly InvariantName[], reason: string): void {
    if (names.length === 0 || reason.trim() === '') throw new Error('allowInvariantBreaches needs the invariants and a reason');
    for (const n of names) this.allowed.set(n, reason);
  }

  record(found: Found, step: number): void {
    const breach = { ...found, step };
    this.breaches.push(breach);
    if (!this.allowed.has(found.invariant)) this.unraised ??= breach;
  }

  /** Throws the first breach not allowed and not thrown yet. */
  raise(): void {
    const b = this.unraised;
    this.unraised = undefined;
    if (b) throw new InvariantBreachError(b);
  }
}

/** Ordinals in range: [start, end). */
export interface Range {
  start: number;
  end: number;
}

const inRange = (p: PodView, r: Range): boolean => p.ordinal >= r.start && p.ordinal < r.end;

export function checkIdentity(after: readonly PodView[], indexLabels: ReadonlyMap<string, string | undefined>): Found[] {
  const out: Found[] = [];
  const ordinals = after.map((p) => p.ordinal);
  if (new Set(ordinals).size !== ordinals.length)
    out.push({ invariant: 'identity', pod: undefined, detail: `two pods share an ordinal: ${ordinals.join(',')}` });
  for (const p of after)
    if (indexLabels.get(p.name) !== String(p.ordinal)) out.push({ invariant: 'identity', pod: p.name, detail: `${p.name} has a wrong pod-index label` });
  return out;
}

/** While paused, no live, healthy-phase pod in range may be deleted, and no in-place update may start. */
export function checkPaused(before: readonly PodView[], after: readonly PodView[], r: Range): Found[] {
  const out: Found[] = [];
  for (const b of before) {
    if (!inRange(b, r)) continue;
    const now = after.find((a) => a.uid === b.uid);
    if (!b.terminating && !b.failed && (!now || now.terminating))
      out.push({ invariant: 'paused', pod: b.name, detail: `paused, yet ${b.name} (${b.revision ?? ''}) was deleted` });
    if (now && !b.updating && (now.updating || now.revision !== b.revision || now.images !== b.images))
      out.push({ invariant: 'paused', pod: b.name, detail: `paused, yet ${b.name} was updated in place` });
  }
  return out;
}

/** The armed limit: never more than `limit` replicas in range unavailable after a reconcile. */
export function checkUnavailable(after: readonly PodView[], r: Range, limit: number): { unavailable: number; found: Found[] } {
  const down: string[] = [];
  for (let o = r.start; o < r.end; o++) {
    const p = after.find((a) => a.ordinal === o);
    if (!p || !p.available) down.push(p?.name ?? `ordinal ${o} (missing)`);
  }
  const found: Found[] =
    down.length > limit
      ? [{ invariant: 'maxUnavailable', pod: down.join(', '), detail: `${down.length} unavailable > maxUnavailable ${limit} (${down.join(', ')})` }]
      : [];
  return { unavailable: down.length, found };
}

/**
 * The armed limit, judged per reconcile: a breach when more than `limit` replicas in range are unavailable
 * after it and the reconcile made an ordinal unavailable that was available before. Pods that fail by
 * themselves (between reconciles) are not its doing, and replacing or updating a pod that was unavailable
 * already (a revert healing a broken pod) leaves its ordinal unavailable, not one more.
 */
export function checkArmedUnavailable(before: readonly PodView[], after: readonly PodView[], r: Range, limit: number): { unavailable: number; found: Found[] } {
  const result = checkUnavailable(after, r, limit);
  if (result.found.length === 0) return result;
  const wasDown = (o: number): boolean => before.find((b) => b.ordinal === o)?.available !== true;
  for (let o = r.start; o < r.end; o++) {
    const p = after.find((a) => a.ordinal === o);
    if ((!p || !p.available) && !wasDown(o)) return result;
  }
  return { unavailable: result.unavailable, found: [] };
}

/**
 * The App's own limit, which needs no arming: a reconcile that takes an available pod in range out of service
 * (deletes it, starts its in-place update, moves it to a lifecycle state) leaves at most `limit` replicas in
 * range unavailable. Pods that fail or start by themselves are not the reconcile's doing and are not judged.
 */
export function checkDisruption(before: readonly PodView[], after: readonly PodView[], r: Range, limit: number): Found[] {
  const disrupted = before.filter((b) => inRange(b, r) && b.available && !after.some((a) => a.uid === b.uid && a.available));
  if (disrupted.length === 0) return [];
  const { unavailable } = checkUnavailable(after, r, limit);
  if (unavailable <= limit) return [];
  const names = disrupted.map((d) => d.name).join(', ');
  return [{ invariant: 'maxUnavailable', pod: names, detail: `took ${names} out of service, leaving ${unavailable} unavailable > maxUnavailable ${limit}` }];
}

/** Pods below the armed partition keep their UID, revision and images. */
export function checkPartition(frozen: ReadonlyMap<number, PodView>, after: readonly PodView[]): Found[] {
  const out: Found[] = [];
  for (const [ordinal, was] of frozen) {
    const now = after.find((a) => a.uid === was.uid && !a.terminating);
    if (!now) out.push({ invariant: 'partition', pod: was.name, detail: `pod ${ordinal} below the partition was replaced` });
    else if (now.updating || now.revision !== was.revision || now.images !== was.images)
      out.push({ invariant: 'partition', pod: was.name, detail: `pod ${ordinal} below the partition was updated in place` });
  }
  return out;
}
