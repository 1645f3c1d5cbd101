/**
 * Runs what the planner decides: lookups and pulls against the runtime, a bounded number at a time, at
 * most one call per image, each pull under its own deadline and cancellable. Results go back into the
 * per-image memory through the transitions of state.ts; every change is reported through `onChange`.
 */
import type { ImageListEntry, ImageStatus } from '../api/image-list.ts';
import type { ImageReference } from '../api/image-ref.ts';
import { repeatGate, type Logger } from '../common/log.ts';
import type { DaemonMetrics } from './metrics.ts';
import type { DaemonOptions } from './options.ts';
import { planImages, type Action, type PlanInput } from './plan.ts';
import { isRuntimeError, type ImageRuntime, type PullAuth } from './runtime.ts';
import { PullSecretError } from './secrets.ts';
import {
  markChecked,
  markDeferred,
  markFailed,
  markInterrupted,
  markInvalid,
  markPresent,
  markPulled,
  markPullStarted,
  syncEntries,
  type ImageMemory,
} from './state.ts';
import type { ImageFsMonitor } from './image-fs.ts';
import { errorMessage, type RetryClass } from '../common/errors.ts';

/** Lookups (ImageStatus) running at once; they are cheap, but a node may list a thousand images. */
const CHECK_CONCURRENCY = 4;
const CHECK_TIMEOUT_MS = 30_000;
/** A reading of the image filesystem serves the pulls that start within this long of it; later ones read again. */
export const DISK_FRESH_MS = 10_000;
/** Timers never sleep longer than this (setTimeout's range is ~24 days; a long sleep re-plans instead). */
const MAX_SLEEP_MS = 3_600_000;

export interface SchedulerDeps {
  runtime: ImageRuntime;
  /** Credentials for a pull of an entry with a pull secret; throws PullSecretError when there are none to use. */
  credentials(entry: ImageListEntry, ref: ImageReference, signal: AbortSignal): Promise<PullAuth | undefined>;
  options: Pick<DaemonOptions, 'pullConcurrency' | 'pullTimeoutMs' | 'backoffBaseMs' | 'backoffMaxMs' | 'recheckPeriodMs'>;
  /** Called after every change of the reported status. */
  onChange(): void;
  metrics?: Pick<DaemonMetrics, 'pulls' | 'pullDuration' | 'imagesPresent' | 'pullsInFlight'> | undefined;
  /** The disk guard: the image filesystem's readings, and the used percent at which no pull starts; absent: none. */
  disk?: { monitor: ImageFsMonitor; highPercent: number } | undefined;
  log: Logger;
  now?: () => number;
  random?: () => number;
}

/** The ImageList the memory belongs to. */
export interface Target {
  uid: string;
  generation: number | undefined;
}

export interface StatusSnapshot extends Target {
  images: ImageStatus[];
}

interface Running {
  kind: 'check' | 'pull';
  ac: AbortController;
  done: Promise<void>;
}

interface Failure {
  code: string;
  message: string;
  retryClass: RetryClass;
}

function failureOf(err: unknown, timedOut: boolean): Failure {
  if (err instanceof PullSecretError) return { code: 'Secret', message: err.message, retryClass: 'transient' };
  if (timedOut) return { code: 'Timeout', message: 'pull did not finish before its deadline', retryClass: 'transient' };
  if (isRuntimeError(err)) return { code: err.code, message: `${err.code}: ${err.message}`, retryClass: err.retryClass };
  return { code: 'Runtime', message: errorMessage(err), retryClass: 'transient' };
}

export class ImageScheduler {
  private readonly deps: SchedulerDeps;
  private readonly now: () => number;
  private readonly random: () => number;
  private memory = new Map<string, ImageMemory>();
  private entries: readonly ImageListEntry[] = [];
  private target: Target | undefined;
  private readonly running = new Map<string, Running>();
  private readonly shutdown = new AbortController();
  private readonly checkLog = repeatGate();
  private kicked = false;
  private wakeUp: (() => void) | undefined;

  constructor(deps: SchedulerDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? Math.random;
  }

  /** The ImageList as last seen: a new uid (the list was re-created) starts from a clean memory. */
  setTarget(target: Target, entries: readonly ImageListEntry[], observed: readonly ImageStatus[]): void {
    if (this.target?.uid !== target.uid) this.clear();
    this.target = target;
    this.entries = entries;
    for (const image of syncEntries(this.memory, entries, observed)) this.running.get(image)?.ac.abort();
    this.changed();
  }

  /** The ImageList is gone: in-flight calls are cancelled and every retry state is dropped. */
  clear(): void {
    for (const r of this.running.values()) r.ac.abort();
    this.memory = new Map();
    this.entries = [];
    this.target = undefined;
    this.changed();
  }

  /** The status to report, in spec order; undefined while there is no ImageList. */
  snapshot(): StatusSnapshot | undefined {
    if (!this.target) return undefined;
    const images = this.entries.flatMap((e) => {
      const m = this.memory.get(e.image);
      return m ? [{ ...m.status }] : [];
    });
    return { ...this.target, images };
  }

  pullsInFlight(): number {
    return [...this.running.values()].filter((r) => r.kind === 'pull').length;
  }

  /** Plans and starts work until `signal` aborts or stop() is called. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !this.shutdown.signal.aborted) {
      const plan = planImages({
        entries: this.entries,
        memory: this.memory,
        busy: new Set(this.running.keys()),
        pullSlots: this.deps.options.pullConcurrency - this.pullsInFlight(),
        checkSlots: CHECK_CONCURRENCY - (this.running.size - this.pullsInFlight()),
        now: this.now(),
        recheckPeriodMs: this.deps.options.recheckPeriodMs,
        disk: this.diskInput(),
      });
      for (const a of plan.actions) this.start(a);
      await this.idle(plan.wakeAt, signal);
    }
  }

  private diskInput(): PlanInput['disk'] {
    const disk = this.deps.disk;
    if (!disk) return undefined;
    return { reading: disk.monitor.reading, busy: disk.monitor.busy, highPercent: disk.highPercent, freshMs: DISK_FRESH_MS };
  }

  /** Starts nothing more, cancels what runs (interrupted pulls go back to Pending) and waits for it to end. */
  async stop(): Promise<void> {
    this.shutdown.abort();
    this.kick();
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  private changed(): void {
    this.deps.metrics?.imagesPresent.set([...this.memory.values()].filter((m) => m.present === true).length);
    this.deps.metrics?.pullsInFlight.set(this.pullsInFlight());
    this.deps.onChange();
    this.kick();
  }

  private kick(): void {
    this.kicked = true;
    this.wakeUp?.();
  }

  /** Waits for a kick, `wakeAt`, or the signal; after a kick it still yields to pending I/O once. */
  private async idle(wakeAt: number | undefined, signal: AbortSignal): Promise<void> {
    if (this.kicked) await new Promise<void>((resolve) => setImmediate(resolve));
    else {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          this.wakeUp = undefined;
          resolve();
        };
        const timer = wakeAt === undefined ? undefined : setTimeout(done, Math.min(MAX_SLEEP_MS, Math.max(0, wakeAt - this.now())));
        signal.addEventListener('abort', done, { once: true });
        this.wakeUp = done;
      });
    }
    this.kicked = false;
  }

  private owns(m: ImageMemory): boolean {
    return this.memory.get(m.image) === m;
  }

  private start(a: Action): void {
    if (a.kind === 'readDisk') {
      // Plans again with the reading (a failed one too: it holds nothing back).
      void this.deps.disk?.monitor.refresh(this.shutdown.signal).then(() => this.kick());
      return;
    }
    const m = this.memory.get(a.image);
    if (!m) return;
    if (a.kind === 'invalid') {
      markInvalid(m, a.message);
      this.deps.log.warn({ image: a.image, reason: a.message }, 'invalid image reference; not pulled');
      this.changed();
      return;
    }
    if (a.kind === 'present') {
      markPresent(m);
      this.changed();
      return;
    }
    if (a.kind === 'defer') {
      markDeferred(m, a.message, this.now() + this.deps.options.recheckPeriodMs);
      this.deps.log.info({ image: a.image, reason: a.message }, 'image pull deferred: image filesystem too full');
      this.changed();
      return;
    }
    const ac = new AbortController();
    const run: Running = { kind: a.kind, ac, done: Promise.resolve() };
    this.running.set(a.image, run);
    run.done = (a.kind === 'pull' ? this.pull(m, a.ref, ac) : this.check(m, ac)).finally(() => {
      if (this.running.get(a.image) === run) this.running.delete(a.image);
      this.changed();
    });
  }

  private async check(m: ImageMemory, ac: AbortController): Promise<void> {
    const signal = AbortSignal.any([ac.signal, this.shutdown.signal, AbortSignal.timeout(CHECK_TIMEOUT_MS)]);
    try {
      const found = await this.deps.runtime.imageStatus(m.image, signal);
      if (!this.owns(m)) return;
      const wasPulled = m.status.phase === 'Pulled';
      markChecked(m, found, this.now());
      this.checkLog.reset();
      if (wasPulled && !found.present) this.deps.log.info({ image: m.image }, 'image gone from the runtime; pulling it again');
    } catch (err) {
      if (ac.signal.aborted || this.shutdown.signal.aborted || !this.owns(m)) return;
      const f = failureOf(err, false);
      markFailed(m, { message: `container runtime: ${f.message}`, retryClass: f.retryClass, pull: false }, this.now(), this.deps.options, this.random);
      const held = this.checkLog.pass(f.message);
      if (held !== undefined)
        this.deps.log.warn({ image: m.image, code: f.code, err: f.message, ...(held > 0 ? { suppressed: held } : {}) }, 'image lookup failed');
    }
  }

  private async pull(m: ImageMemory, ref: ImageReference, ac: AbortController): Promise<void> {
    const { options, metrics, log } = this.deps;
    const started = this.now();
    const answers = m.entry.pullRequestedAt;
    markPullStarted(m, started);
    this.changed();
    const deadline = AbortSignal.timeout(options.pullTimeoutMs);
    const signal = AbortSignal.any([ac.signal, this.shutdown.signal, deadline]);
    let result = 'success';
    try {
      const auth = m.entry.pullSecret ? await this.deps.credentials(m.entry, ref, signal) : undefined;
      const { imageRef } = await this.deps.runtime.pull(m.image, auth, signal);
      if (!this.owns(m)) return void (result = 'cancelled');
      markPulled(m, imageRef, answers, this.now(), started);
      log.info({ image: m.image, imageRef, attempts: m.status.attempts, durationMs: this.now() - started }, 'image pulled');
    } catch (err) {
      if (ac.signal.aborted || this.shutdown.signal.aborted || !this.owns(m)) {
        result = 'cancelled';
        if (this.owns(m)) markInterrupted(m);
        return;
      }
      const f = failureOf(err, deadline.aborted);
      result = f.code;
      markFailed(m, { message: f.message, retryClass: f.retryClass, pull: true }, this.now(), options, this.random);
      log.warn({ image: m.image, code: f.code, err: f.message, attempts: m.status.attempts, retryInMs: (m.retryAt ?? 0) - this.now() }, 'image pull failed');
    } finally {
      metrics?.pulls.inc({ result });
      if (result !== 'cancelled') metrics?.pullDuration.observe((this.now() - started) / 1000);
    }
  }
}
