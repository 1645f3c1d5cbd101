/**
 * Fewer, aggregated Events, decided the way client-go's recorders decide them, for one worker process:
 * - an Event isomorphic to one written in the last `seriesWindowMs` (same App, type, reason, action, related
 *   object and note) is not written again: the first one's `series` (count, lastObservedTime) grows and is
 *   patched at most once per `heartbeatMs`;
 * - once `similarLimit` Events of one App, type, reason and action with different notes were written within
 *   `similarWindowMs`, the next ones are counted into one "(combined from similar events)" Event;
 * - each App may create at most `burst` Events, refilled at one per `refillMs`; beyond that they are dropped
 *   (an Event is best effort, as in client-go; the App's status and the job summary keep the facts).
 * The state is per process and forgotten on restart: a restarted worker may write one more Event of a series.
 */
import type { App } from '../../../api/app.ts';
import type { Stored } from '../../../kube/types.ts';
import type { EventSpec } from '../model/actions.ts';

export interface CorrelatorOptions {
  seriesWindowMs: number;
  heartbeatMs: number;
  similarLimit: number;
  similarWindowMs: number;
  burst: number;
  refillMs: number;
  /** Keys remembered at most (oldest forgotten first). */
  maxKeys: number;
}

export const CORRELATOR_DEFAULTS: CorrelatorOptions = {
  seriesWindowMs: 6 * 60_000,
  heartbeatMs: 60_000,
  similarLimit: 10,
  similarWindowMs: 10 * 60_000,
  burst: 25,
  refillMs: 5 * 60_000,
  maxKeys: 4096,
};

export const COMBINED_PREFIX = '(combined from similar events): ';

/** What to do with one Event. */
export type EventDecision = { kind: 'create'; key: string; spec: EventSpec } | { kind: 'count'; key: string } | { kind: 'drop'; reason: 'rate limited' };

/** A series whose count grew since it was last written. */
export interface DueSeries {
  key: string;
  namespace: string;
  name: string;
  count: number;
  lastObserved: number;
}

interface Written {
  namespace: string;
  /** The Event's name once created; undefined while its create is in flight or when it failed. */
  name: string | undefined;
  count: number;
  writtenCount: number;
  lastObserved: number;
  lastWritten: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class EventCorrelator {
  private readonly written = new Map<string, Written>();
  private readonly similar = new Map<string, Map<string, number>>();
  private readonly buckets = new Map<string, Bucket>();

  private readonly opts: CorrelatorOptions;

  constructor(opts: CorrelatorOptions = CORRELATOR_DEFAULTS) {
    this.opts = opts;
  }

  /** Decides what happens to `spec` on `app` at `now` (ms), and remembers it. */
  decide(app: Stored<App>, spec: EventSpec, now: number): EventDecision {
    const uid = app.metadata.uid ?? `${app.metadata.namespace}/${app.metadata.name}`;
    const similarKey = [uid, spec.type, spec.reason, spec.action].join('\u0000');
    const isoKey = `${similarKey}\u0000${spec.related?.kind ?? ''}/${spec.related?.name ?? ''}\u0000${spec.message}`;
    if (this.countInto(isoKey, now)) return { kind: 'count', key: isoKey };
    const combined = this.noteSimilar(similarKey, spec.message, now);
    const key = combined ? `${similarKey}\u0000combined` : isoKey;
    if (combined && this.countInto(key, now)) return { kind: 'count', key };
    if (!this.take(uid, now)) return { kind: 'drop', reason: 'rate limited' };
    this.remember(key, { namespace: app.metadata.namespace, name: undefined, count: 1, writtenCount: 1, lastObserved: now, lastWritten: now });
    const out: EventSpec = combined ? { ...spec, message: `${COMBINED_PREFIX}${spec.message}`, related: undefined } : spec;
    return { kind: 'create', key, spec: out };
  }

  /** The created Event's name, so its series can be patched; a failed create forgets the key. */
  created(key: string, name: string | undefined): void {
    const w = this.written.get(key);
    if (!w) return;
    if (name === undefined) this.written.delete(key);
    else w.name = name;
  }

  /** Series whose count grew and were last written at least `heartbeatMs` ago (or whose series ended). */
  due(now: number, all = false): DueSeries[] {
    const out: DueSeries[] = [];
    for (const [key, w] of this.written) {
      if (w.name === undefined || w.count === w.writtenCount) continue;
      const ended = now - w.lastObserved >= this.opts.seriesWindowMs;
      if (all || ended || now - w.lastWritten >= this.opts.heartbeatMs) {
        out.push({ key, namespace: w.namespace, name: w.name, count: w.count, lastObserved: w.lastObserved });
      }
    }
    return out;
  }

  /** A series patch went through (or failed for good: then it is not retried). */
  wrote(key: string, count: number, now: number): void {
    const w = this.written.get(key);
    if (!w) return;
    w.writtenCount = count;
    w.lastWritten = now;
  }

  private countInto(key: string, now: number): boolean {
    const w = this.written.get(key);
    if (!w || now - w.lastObserved >= this.opts.seriesWindowMs) return false;
    w.count += 1;
    w.lastObserved = now;
    return true;
  }

  /** Records a note under `key`; true when the key already saw `similarLimit` other notes in the window. */
  private noteSimilar(key: string, note: string, now: number): boolean {
    const notes = this.similar.get(key) ?? new Map<string, number>();
    for (const [n, at] of notes) if (now - at >= this.opts.similarWindowMs) notes.delete(n);
    const over = notes.size >= this.opts.similarLimit && !notes.has(note);
    if (!over) notes.set(note, now);
    this.similar.delete(key);
    this.similar.set(key, notes);
    this.trim(this.similar);
    return over;
  }

  private take(uid: string, now: number): boolean {
    const b = this.buckets.get(uid) ?? { tokens: this.opts.burst, at: now };
    const refill = Math.floor((now - b.at) / this.opts.refillMs);
    if (refill > 0) {
      b.tokens = Math.min(this.opts.burst, b.tokens + refill);
      b.at += refill * this.opts.refillMs;
    }
    if (b.tokens >= this.opts.burst) b.at = now;
    this.buckets.delete(uid);
    this.buckets.set(uid, b);
    this.trim(this.buckets);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  private remember(key: string, w: Written): void {
    this.written.delete(key);
    this.written.set(key, w);
    this.trim(this.written);
  }

  private trim<V>(m: Map<string, V>): void {
    while (m.size > this.opts.maxKeys) {
      const oldest = m.keys().next().value;
      if (oldest === undefined) return;
      m.delete(oldest);
    }
  }
}
