/**
 * Batched status writes of the node's ImageList. Changes are collected for `flushMs` after the first one,
 * then the whole status (observedGeneration and every image, in spec order) goes out in one merge patch of
 * the status subresource, unless it already reads so. The patch carries the uid and resourceVersion it was
 * computed against, so it never lands on a re-created list, and a conflict re-reads the list and retries.
 */
import { canonicalJson } from '../common/canonical-json.ts';
import { IMAGE_LIST_KIND, API_VERSION } from '../api/group.ts';
import type { ImageList, ImageListStatus } from '../api/image-list.ts';
import { backoffMs } from '../common/backoff.ts';
import type { Logger } from '../common/log.ts';
import { isKubeError } from '../kube/errors.ts';
import type { StatusSnapshot } from './scheduler.ts';
import { errorMessage } from '../common/errors.ts';

/** The daemon's seam to the apiserver for its ImageList. */
export interface StatusApi {
  /** Merge-patches the status subresource; answers the updated object. */
  patchStatus(patch: StatusPatch, signal: AbortSignal): Promise<ImageList>;
  get(signal: AbortSignal): Promise<ImageList>;
}

export interface StatusPatch {
  apiVersion: string;
  kind: string;
  metadata: { uid: string; resourceVersion: string };
  status: ImageListStatus;
}

/** What the daemon last read of the list: enough to compare and to guard a write. */
interface Observed {
  uid: string;
  resourceVersion: string;
  status: ImageListStatus | undefined;
}

const CONFLICT_RETRIES = 5;
const ERROR_BACKOFF = { baseMs: 1_000, capMs: 30_000 };
const WRITE_TIMEOUT_MS = 30_000;

/** The status the snapshot says, or undefined when the observed list already reads so (or is another list). */
export function statusPatch(observed: Observed | undefined, desired: StatusSnapshot | undefined): StatusPatch | undefined {
  if (!observed || !desired || observed.uid !== desired.uid) return undefined;
  const status: ImageListStatus = { images: desired.images };
  if (desired.generation !== undefined) status.observedGeneration = desired.generation;
  const current: ImageListStatus = { images: observed.status?.images ?? [] };
  if (observed.status?.observedGeneration !== undefined) current.observedGeneration = observed.status.observedGeneration;
  // Keys sorted: two statuses compare equal whatever order the apiserver keeps keys in.
  if (canonicalJson(current) === canonicalJson(status)) return undefined;
  return { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND, metadata: { uid: observed.uid, resourceVersion: observed.resourceVersion }, status };
}

function observedOf(obj: ImageList | undefined): Observed | undefined {
  const { uid, resourceVersion } = obj?.metadata ?? {};
  return uid && resourceVersion ? { uid, resourceVersion, status: obj?.status } : undefined;
}

export interface StatusWriterDeps {
  api: StatusApi;
  /** The status to report now (undefined: no list). */
  desired(): StatusSnapshot | undefined;
  flushMs: number;
  log: Logger;
  /** Counts writes by result (ok, conflict, error). */
  onWrite?(result: 'ok' | 'conflict' | 'error'): void;
  /** Delay before a failed write is tried again (capped exponential; default 1 s to 30 s). */
  errorBackoff?: { baseMs: number; capMs: number };
}

export class StatusWriter {
  private readonly deps: StatusWriterDeps;
  private observed: Observed | undefined;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private dirty = false;
  private errors = 0;
  private closed = false;
  private readonly ac = new AbortController();
  /** Writes sent (successful or not). */
  writes = 0;

  constructor(deps: StatusWriterDeps) {
    this.deps = deps;
  }

  /** The list as the watch delivered it; undefined when it does not exist. */
  observe(obj: ImageList | undefined): void {
    this.observed = observedOf(obj);
  }

  /** Something changed: a write goes out within flushMs (one write for every change until then). */
  markDirty(): void {
    this.dirty = true;
    this.schedule(this.deps.flushMs);
  }

  /** Writes what is pending now (the final status at shutdown), then accepts no more changes. */
  async close(signal: AbortSignal): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const onAbort = (): void => this.ac.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await this.writing;
      if (this.dirty) await this.flush();
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.ac.abort();
    }
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.timer || this.writing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.flush().finally(() => {
        this.writing = undefined;
        const b = this.deps.errorBackoff ?? ERROR_BACKOFF;
        if (this.dirty) this.schedule(this.errors > 0 ? backoffMs(this.errors, b.baseMs, b.capMs) : this.deps.flushMs);
      });
    }, delayMs);
  }

  /** One write of the current status, re-read and retried on conflict. Never throws. */
  private async flush(): Promise<void> {
    this.dirty = false;
    for (let attempt = 0; attempt <= CONFLICT_RETRIES; attempt++) {
      const patch = statusPatch(this.observed, this.deps.desired());
      if (!patch) return;
      const signal = AbortSignal.any([this.ac.signal, AbortSignal.timeout(WRITE_TIMEOUT_MS)]);
      try {
        this.writes++;
        this.observed = observedOf(await this.deps.api.patchStatus(patch, signal));
        this.deps.onWrite?.('ok');
        this.errors = 0;
        return;
      } catch (err) {
        if (isKubeError(err, 'NotFound')) {
          this.observed = undefined;
          return;
        }
        if (!isKubeError(err, 'Conflict')) return this.failed(err);
        this.deps.onWrite?.('conflict');
        if (!(await this.reread(signal))) return;
      }
    }
    this.failed(new Error(`still conflicting after ${CONFLICT_RETRIES} retries`));
  }

  /** After a conflict: the list as it is now. False when it cannot be read or is gone. */
  private async reread(signal: AbortSignal): Promise<boolean> {
    try {
      const fresh = observedOf(await this.deps.api.get(signal));
      if (fresh?.uid !== this.observed?.uid) return false;
      this.observed = fresh;
      return true;
    } catch (err) {
      if (isKubeError(err, 'NotFound')) this.observed = undefined;
      else this.failed(err);
      return false;
    }
  }

  private failed(err: unknown): void {
    this.deps.onWrite?.('error');
    this.errors++;
    this.dirty = true;
    this.deps.log.warn({ err: errorMessage(err), failures: this.errors }, 'status write failed; will retry');
  }
}
