/**
 * An ImageRuntime in memory for daemon tests: counts every call, holds images, can fail chosen calls, and can
 * hold pulls until the test releases them (to observe concurrency and cancellation).
 */
import { RuntimeError, type ImageRuntime, type PullAuth } from '../../../src/daemon/runtime.ts';

export interface PullCall {
  image: string;
  auth: PullAuth | undefined;
  signal: AbortSignal;
}

export class FakeRuntime implements ImageRuntime {
  readonly images = new Map<string, string>();
  readonly pulls: PullCall[] = [];
  readonly statusCalls: string[] = [];
  versionCalls = 0;
  /** Pulls running now, and the most that ever ran at once. */
  running = 0;
  maxRunning = 0;
  /** Pulls of the same image running at once, at most (must stay 1). */
  maxSameImage = 0;
  private readonly runningByImage = new Map<string, number>();
  /** Errors for the given 1-based pull numbers. */
  readonly failPull = new Map<number, RuntimeError>();
  /** Error thrown by every ImageStatus call while set. */
  statusError: RuntimeError | undefined;
  /** While true, pulls wait until `release()` (or their signal). */
  hold = false;
  private waiters: (() => void)[] = [];

  async version(): Promise<{ runtimeName: string; runtimeVersion: string }> {
    this.versionCalls++;
    return Promise.resolve({ runtimeName: 'fake', runtimeVersion: '1' });
  }

  async imageStatus(image: string): Promise<{ present: boolean; imageRef?: string }> {
    this.statusCalls.push(image);
    if (this.statusError) throw this.statusError;
    const ref = this.images.get(image);
    return Promise.resolve(ref ? { present: true, imageRef: ref } : { present: false });
  }

  async pull(image: string, auth: PullAuth | undefined, signal: AbortSignal): Promise<{ imageRef: string }> {
    this.pulls.push({ image, auth, signal });
    const n = this.pulls.length;
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const same = (this.runningByImage.get(image) ?? 0) + 1;
    this.runningByImage.set(image, same);
    this.maxSameImage = Math.max(this.maxSameImage, same);
    try {
      if (this.hold) await this.waitRelease(signal);
      const err = this.failPull.get(n);
      if (err) throw err;
      const ref = `sha256:${Buffer.from(image).toString('hex').slice(0, 16)}`;
      this.images.set(image, ref);
      return { imageRef: ref };
    } finally {
      this.running--;
      this.runningByImage.set(image, (this.runningByImage.get(image) ?? 1) - 1);
    }
  }

  /** Lets every held pull go on. */
  release(): void {
    this.hold = false;
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  private waitRelease(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new RuntimeError('Aborted', 'aborted'));
      const onAbort = (): void => reject(new RuntimeError('Aborted', 'aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }
}
