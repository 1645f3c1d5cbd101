/**
 * The daemon's narrow port to the container runtime: the calls it makes, with typed errors. The
 * daemon depends on this interface only; an adapter maps a CRI client onto it, and tests use fakes.
 */
import { ClassifiedError, type RetryClass } from '../common/errors.ts';

/** Registry credentials for one pull; every field except username and serverAddress is a secret. */
export interface PullAuth {
  username?: string;
  password?: string;
  /** base64 of `username:password`, as in a docker config. */
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface RuntimeVersion {
  runtimeName: string;
  runtimeVersion: string;
}

export interface ImageRuntime {
  /** Answers when the runtime is reachable and serving. */
  version(signal: AbortSignal): Promise<RuntimeVersion>;
  /** Whether the runtime holds the image, and its reference (image ID) and size in bytes when it does. */
  imageStatus(image: string, signal: AbortSignal): Promise<{ present: boolean; imageRef?: string | undefined; sizeBytes?: number | undefined }>;
  /** Pulls the image (always contacting the registry) and returns its reference (image ID). */
  pull(image: string, auth: PullAuth | undefined, signal: AbortSignal): Promise<{ imageRef: string }>;
  /**
   * The filesystems holding the runtime's images (CRI ImageFsInfo): where each is mounted, and the bytes images
   * use on it when the runtime says. Absent: the runtime cannot tell, and pulls are not held back for disk.
   */
  imageFs?(signal: AbortSignal): Promise<ImageFilesystem[]>;
}

export interface ImageFilesystem {
  mountpoint: string;
  usedBytes: number | undefined;
}

/**
 * - `NotFound`: the registry does not know the image (a tag may be pushed later: retried with backoff).
 * - `Unavailable`: the runtime (or the registry behind it) cannot be reached.
 * - `Timeout`: the call's deadline passed.
 * - `Auth`: the registry refused the credentials, or there were none (retried with backoff).
 * - `Runtime`: anything else the runtime reported.
 * - `Aborted`: the caller cancelled the call.
 */
export type RuntimeErrorCode = 'NotFound' | 'Unavailable' | 'Timeout' | 'Auth' | 'Runtime' | 'Aborted';

/** A failed runtime call. The message never carries credentials; it is safe to log and to put in status. */
export class RuntimeError extends ClassifiedError {
  override readonly name = 'RuntimeError';
  readonly code: RuntimeErrorCode;
  /** `transient` when the same call may succeed later without a change of the request, else `permanent`. */
  readonly retryClass: RetryClass;
  constructor(code: RuntimeErrorCode, message: string, retryClass: RetryClass = code !== 'Runtime' ? 'transient' : 'permanent') {
    super(message);
    this.code = code;
    this.retryClass = retryClass;
  }
}

export function isRuntimeError(err: unknown, ...codes: RuntimeErrorCode[]): err is RuntimeError {
  return err instanceof RuntimeError && (codes.length === 0 || codes.includes(err.code));
}
