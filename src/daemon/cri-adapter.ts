/**
 * ImageRuntime over the project's CRI client: the daemon's calls, with the CRI error codes narrowed to
 * the daemon's own. The CRI client classifies gRPC statuses in one place; nothing here reads messages.
 */
import { CriClient, isCriError } from '../cri/client.ts';
import { RuntimeError, type ImageRuntime, type PullAuth, type RuntimeErrorCode } from './runtime.ts';
import { errorMessage } from '../common/errors.ts';

const CODES: Partial<Record<string, RuntimeErrorCode>> = {
  ImageNotFound: 'NotFound',
  AuthFailed: 'Auth',
  Unavailable: 'Unavailable',
  DeadlineExceeded: 'Timeout',
  Aborted: 'Aborted',
};

/** A CRI failure as a RuntimeError, keeping the CRI client's retry class for the codes it does not name. */
export function runtimeErrorOf(err: unknown): RuntimeError {
  if (err instanceof RuntimeError) return err;
  if (!isCriError(err)) return new RuntimeError('Runtime', errorMessage(err), 'transient');
  const code = CODES[err.code];
  return code ? new RuntimeError(code, err.message) : new RuntimeError('Runtime', err.message, err.retryClass);
}

export interface CriRuntime extends ImageRuntime {
  close(): void;
}

/** The runtime behind a `unix:///…` CRI endpoint. */
export function criImageRuntime(endpoint: string, opts: { pullTimeoutMs: number }): CriRuntime {
  const client = CriClient.connect(endpoint, { pullTimeoutMs: opts.pullTimeoutMs });
  const wrap = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw runtimeErrorOf(err);
    }
  };
  return {
    version: (signal) => wrap(async () => client.version({ signal })),
    imageStatus: (image, signal) =>
      wrap(async () => {
        const found = await client.imageStatus(image, { signal });
        return found ? { present: true, imageRef: found.id, sizeBytes: found.size } : { present: false };
      }),
    imageFs: (signal) => wrap(async () => (await client.imageFsInfo({ signal })).map((fs) => ({ mountpoint: fs.mountpoint, usedBytes: fs.usedBytes }))),
    pull: (image, auth: PullAuth | undefined, signal) => wrap(async () => ({ imageRef: await client.pullImage(image, auth ? { signal, auth } : { signal }) })),
    close: () => client.close(),
  };
}
