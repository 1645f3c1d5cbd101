/**
 * Pod events held back briefly (`PodVerdict` in pod-digest.ts): a pod that started terminating waits for its
 * App's status to be written (an App's own delete is followed by that write, which counts it); a change of a
 * terminating pod waits for the pod's removal (which enqueues its App anyway). Whatever is still waiting when
 * its hold ends enqueues its App. One entry per held pod, gone once it fired or was released.
 */
import { formatKey, type ObjectKey } from '../queue/names.ts';

/** How long a pod event is held: an App's reconcile writes its status, a kubelet removes a stopped pod, within it. */
export const POD_HOLD_MS = 2_000;

export type HoldReason = 'await-status' | 'await-removal';

/**
 * Why a held event needed no enqueue of its own: `status-counted`, the App's status was written (or the App
 * changed) during the hold; `covered`, an event of the same pod was enqueued (its removal, another change).
 */
export type ReleaseReason = 'status-counted' | 'covered';

/** The timer functions (the test's clock in tests). */
export interface HoldTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: HoldTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface Hold {
  app: ObjectKey;
  appId: string;
  waiting: Set<HoldReason>;
  timer: unknown;
}

export class PodHolds {
  private readonly holds = new Map<string, Hold>();
  private readonly fire: (app: ObjectKey) => void;
  private readonly ms: number;
  private readonly timers: HoldTimers;
  private readonly onReleased: (reason: ReleaseReason) => void;

  /**
   * `fire` enqueues an App whose hold ran out; `onReleased` counts a held event that needed no enqueue of its
   * own; every hold is dropped once `signal` aborts.
   */
  constructor(opts: { fire: (app: ObjectKey) => void; signal: AbortSignal; onReleased?: (reason: ReleaseReason) => void; ms?: number; timers?: HoldTimers }) {
    this.fire = opts.fire;
    this.onReleased = opts.onReleased ?? (() => undefined);
    this.ms = opts.ms ?? POD_HOLD_MS;
    this.timers = opts.timers ?? realTimers;
    opts.signal.addEventListener('abort', () => this.clear(), { once: true });
  }

  /** Holds pod `podId`'s event for `reason` (a hold already running keeps its end). */
  hold(podId: string, app: ObjectKey, reason: HoldReason): void {
    const held = this.holds.get(podId);
    if (held) {
      held.waiting.add(reason);
      return;
    }
    const timer = this.timers.set(() => this.expire(podId), this.ms);
    this.holds.set(podId, { app, appId: formatKey(app), waiting: new Set([reason]), timer });
  }

  /** The pod's event was enqueued (or the pod is gone, which enqueues): nothing held for it is needed. */
  release(podId: string): boolean {
    if (!this.drop(podId)) return false;
    this.onReleased('covered');
    return true;
  }

  /** An event of App `app` (its status written, its spec edited, or it is gone): deletes it awaited are covered. */
  appEvent(app: ObjectKey): number {
    const id = formatKey(app);
    let released = 0;
    for (const [podId, held] of this.holds) {
      if (held.appId !== id || !held.waiting.delete('await-status')) continue;
      if (held.waiting.size > 0) continue;
      this.drop(podId);
      this.onReleased('status-counted');
      released++;
    }
    return released;
  }

  get size(): number {
    return this.holds.size;
  }

  clear(): void {
    for (const held of this.holds.values()) this.timers.clear(held.timer);
    this.holds.clear();
  }

  private drop(podId: string): boolean {
    const held = this.holds.get(podId);
    if (!held) return false;
    this.timers.clear(held.timer);
    this.holds.delete(podId);
    return true;
  }

  private expire(podId: string): void {
    const held = this.holds.get(podId);
    if (!held) return;
    this.holds.delete(podId);
    this.fire(held.app);
  }
}
