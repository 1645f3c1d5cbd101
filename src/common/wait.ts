/** Waits that an AbortSignal cancels: a sleep, polling until a check passes, and the error both reject with. */

/** Error thrown by waits that were cancelled through their AbortSignal. */
export class AbortedError extends Error {
  override readonly name = 'AbortedError';
  constructor(message = 'operation aborted') {
    super(message);
  }
}

/** Resolves after `ms`, or rejects with AbortedError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new AbortedError());
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Polls `check` until it returns a value other than undefined, or the signal/timeout ends the wait. */
export async function waitFor<T>(
  check: () => Promise<T | undefined> | T | undefined,
  opts: { timeoutMs: number; intervalMs?: number; signal?: AbortSignal; what: string },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const cause = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${opts.what}${cause}`);
    }
    await sleep(opts.intervalMs ?? 100, opts.signal);
  }
}
