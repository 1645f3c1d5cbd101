/**
 * ImageRuntime over the project's CRI image client. The client speaks only the CRI ImageService, so
 * `version` is answered by a cheap ImageStatus round trip instead of RuntimeService.Version.
 */
import { CriImageClient, isCriError, type CriError } from '../cri/client.ts';
import { RuntimeError, type ImageRuntime, type PullAuth } from './runtime.ts';

/** Looked up to see that the runtime answers; the reserved `.invalid` host never names a real image. */
const PROBE_IMAGE = 'ebb.invalid/runtime-probe:latest';
const PROBE_TIMEOUT_MS = 10_000;

const NOT_FOUND = /not found|manifest unknown|name unknown|repository does not exist/i;
const AUTH = /unauthorized|authentication required|authorization failed|access denied|denied:|\b401\b|\b403\b/i;

/** A CRI failure as a RuntimeError. containerd reports every registry failure as UNKNOWN, so its text decides. */
export function runtimeErrorOf(err: unknown): RuntimeError {
  if (err instanceof RuntimeError) return err;
  if (!isCriError(err)) return new RuntimeError('Runtime', err instanceof Error ? err.message : String(err), true);
  const e: CriError = err;
  switch (e.code) {
    case 'Aborted':
      return new RuntimeError('Aborted', e.message);
    case 'DeadlineExceeded':
      return new RuntimeError('Timeout', e.message);
    case 'Unavailable':
      return new RuntimeError('Unavailable', e.message);
    case 'NotFound':
      return new RuntimeError('NotFound', e.message);
    case 'InvalidArgument':
    case 'Unimplemented':
      return new RuntimeError('Runtime', e.message, false);
    case 'Unknown':
      if (NOT_FOUND.test(e.message)) return new RuntimeError('NotFound', e.message);
      if (AUTH.test(e.message)) return new RuntimeError('Auth', e.message);
      return new RuntimeError('Runtime', e.message, true);
  }
}

/** The socket path of a CRI endpoint written as a path or as `unix:///path`. */
export function socketPathOf(endpoint: string): string {
  return endpoint.startsWith('unix://') ? endpoint.slice('unix://'.length) : endpoint;
}

export interface CriRuntime extends ImageRuntime {
  close(): void;
}

export function criImageRuntime(endpoint: string, opts: { pullTimeoutMs: number }): CriRuntime {
  const client = CriImageClient.connect(socketPathOf(endpoint), { pullTimeoutMs: opts.pullTimeoutMs });
  const wrap = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw runtimeErrorOf(err);
    }
  };
  return {
    version: (signal) =>
      wrap(async () => {
        await client.imageStatus(PROBE_IMAGE, { signal, timeoutMs: PROBE_TIMEOUT_MS });
        return { runtimeName: 'cri', runtimeVersion: 'unknown' };
      }),
    imageStatus: (image, signal) =>
      wrap(async () => {
        const found = await client.imageStatus(image, { signal });
        return found ? { present: true, imageRef: found.id } : { present: false };
      }),
    pull: (image, auth: PullAuth | undefined, signal) =>
      wrap(async () => ({ imageRef: await client.pullImage(image, auth ? { signal, auth } : { signal }) })),
    close: () => client.close(),
  };
}
