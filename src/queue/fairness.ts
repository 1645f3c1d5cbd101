/**
 * Tenant fairness on BullMQ's open-source queue, which has no groups: the producer gives each event job a
 * priority from how much its namespace enqueued recently. A quiet namespace's change gets priority 0 and goes
 * to the wait list, which every worker empties before it looks at prioritized jobs; a namespace enqueuing
 * more than a burst gets a tier from 1 up (one tier per doubling of its recent rate), so its backlog waits in
 * BullMQ's prioritized set behind every quiet namespace's change but still ahead of background resync work.
 * Within one tier BullMQ keeps FIFO order. Why priorities and not one queue per tenant: docs/decisions/queue.md,
 * "Tenant fairness".
 */

/** `namespace`: event priorities from each namespace's recent enqueue rate. `off`: every event priority 0 (FIFO). */
export type Fairness = 'namespace' | 'off';
export const FAIRNESS_MODES: readonly Fairness[] = ['namespace', 'off'];

export interface FairnessPolicy {
  /** Enqueues a namespace may make in about one half-life and still count as quiet (priority 0). */
  readonly burst: number;
  /** The recent count halves every this many ms without enqueues. */
  readonly halfLifeMs: number;
  /** The highest tier; it must stay below the resync priority so background work stays last. */
  readonly maxTier: number;
}

export const DEFAULT_FAIRNESS_POLICY: FairnessPolicy = Object.freeze({ burst: 64, halfLifeMs: 10_000, maxTier: 20 });

/**
 * The tenant tier of a namespace whose recent (decayed) enqueue count, this one included, is `recent` (its
 * event jobs take it as their BullMQ job priority): 0 up to `burst`, then 1 + log2(recent / burst), capped at `maxTier`. Lower runs sooner.
 */
export function tenantTier(recent: number, policy: FairnessPolicy = DEFAULT_FAIRNESS_POLICY): number {
  if (!(recent > policy.burst)) return 0;
  return Math.min(policy.maxTier, 1 + Math.floor(Math.log2(recent / policy.burst)));
}

/** An exponentially decayed count: `count` at time `at`, halving every `halfLifeMs`. */
export interface Decayed {
  readonly count: number;
  readonly at: number;
}

/** The count after one more enqueue at `now` (a clock that goes back is taken as no time passed). */
export function decayAndAdd(prev: Decayed | undefined, now: number, halfLifeMs: number): Decayed {
  if (!prev) return { count: 1, at: now };
  return { count: decayed(prev, now, halfLifeMs) + 1, at: Math.max(now, prev.at) };
}

export function decayed(d: Decayed, now: number, halfLifeMs: number): number {
  const elapsed = Math.max(0, now - d.at);
  return d.count * 2 ** (-elapsed / halfLifeMs);
}

/**
 * The producer's per-namespace recent-enqueue counts (the watcher is the one producer of event jobs). Holds
 * one small record per namespace that enqueued recently; a record that decayed to nothing is dropped.
 */
export class TenantRates {
  readonly mode: Fairness;
  private readonly policy: FairnessPolicy;
  private readonly now: () => number;
  private readonly counts = new Map<string, Decayed>();
  private calls = 0;

  constructor(mode: Fairness, policy: FairnessPolicy = DEFAULT_FAIRNESS_POLICY, now: () => number = Date.now) {
    this.mode = mode;
    this.policy = policy;
    this.now = now;
  }

  /** Records one event enqueue of `namespace` ('' for cluster-scoped objects) and returns its job priority. */
  priorityFor(namespace: string): number {
    if (this.mode === 'off') return 0;
    const t = this.now();
    const next = decayAndAdd(this.counts.get(namespace), t, this.policy.halfLifeMs);
    this.counts.set(namespace, next);
    if (++this.calls % 1024 === 0) this.prune(t);
    return tenantTier(next.count, this.policy);
  }

  /** Namespaces currently tracked (for tests and metrics). */
  get size(): number {
    return this.counts.size;
  }

  private prune(now: number): void {
    for (const [ns, d] of this.counts) if (decayed(d, now, this.policy.halfLifeMs) < 0.5) this.counts.delete(ns);
  }
}
