import { status as GrpcStatus } from '@grpc/grpc-js';
import { ClassifiedError, errorMessage, type RetryClass } from '../common/errors.ts';

/**
 * The one place where failures of CRI calls become typed errors. Callers branch on `code` (and
 * `retryClass`), never on messages. A CriError keeps only the method, the gRPC status code and the runtime's
 * status message with any credential of the call blanked out: never the request nor the response metadata,
 * so it is safe to log.
 */
export type CriErrorCode =
  /** The image or tag does not exist in the registry (gRPC NOT_FOUND). */
  | 'ImageNotFound'
  /** The registry refused the pull's credentials, or none were given where some are needed. */
  | 'AuthFailed'
  /** The runtime is not reachable (socket absent, runtime restarting, connection lost, client closed). */
  | 'Unavailable'
  /** The call's deadline passed before the runtime answered. */
  | 'DeadlineExceeded'
  /** The runtime or the connection cancelled the call (gRPC CANCELLED that ebb did not ask for). */
  | 'Cancelled'
  /** The caller's AbortSignal fired; the call was cancelled. */
  | 'Aborted'
  /** The endpoint is not a `unix:///absolute/path` (see endpoint.ts). */
  | 'InvalidEndpoint'
  | RuntimeErrorCode;

/**
 * Any other failure the runtime reports: the code is the name of its gRPC status (gRPC ABORTED is
 * `RuntimeAborted`, to stay apart from the caller's own `Aborted`). containerd reports most failed pulls
 * (registry down, bad layer, ...) as `Unknown`; an invalid image reference is `InvalidArgument`.
 */
export type RuntimeErrorCode =
  | 'InvalidArgument'
  | 'Unknown'
  | 'Internal'
  | 'Unimplemented'
  | 'FailedPrecondition'
  | 'ResourceExhausted'
  | 'AlreadyExists'
  | 'OutOfRange'
  | 'DataLoss'
  | 'RuntimeAborted';

/** gRPC status → code. A status missing here (or an error without one) is `Unknown`. */
const BY_STATUS: ReadonlyMap<GrpcStatus, CriErrorCode> = new Map<GrpcStatus, CriErrorCode>([
  [GrpcStatus.NOT_FOUND, 'ImageNotFound'],
  [GrpcStatus.UNAUTHENTICATED, 'AuthFailed'],
  [GrpcStatus.PERMISSION_DENIED, 'AuthFailed'],
  [GrpcStatus.UNAVAILABLE, 'Unavailable'],
  [GrpcStatus.DEADLINE_EXCEEDED, 'DeadlineExceeded'],
  [GrpcStatus.CANCELLED, 'Cancelled'],
  [GrpcStatus.INVALID_ARGUMENT, 'InvalidArgument'],
  [GrpcStatus.UNKNOWN, 'Unknown'],
  [GrpcStatus.INTERNAL, 'Internal'],
  [GrpcStatus.UNIMPLEMENTED, 'Unimplemented'],
  [GrpcStatus.FAILED_PRECONDITION, 'FailedPrecondition'],
  [GrpcStatus.RESOURCE_EXHAUSTED, 'ResourceExhausted'],
  [GrpcStatus.ALREADY_EXISTS, 'AlreadyExists'],
  [GrpcStatus.OUT_OF_RANGE, 'OutOfRange'],
  [GrpcStatus.DATA_LOSS, 'DataLoss'],
  [GrpcStatus.ABORTED, 'RuntimeAborted'],
]);

/** Codes whose call may succeed when repeated later (with backoff). */
const RETRYABLE: ReadonlySet<CriErrorCode> = new Set<CriErrorCode>([
  'Unavailable',
  'DeadlineExceeded',
  'Cancelled',
  'Unknown',
  'Internal',
  'ResourceExhausted',
  'RuntimeAborted',
]);

/**
 * containerd (1.6 and 1.7) answers a pull the registry refused for its credentials with gRPC UNKNOWN and the
 * registry's HTTP status in the message only, e.g. `failed to pull and unpack image "…": failed to resolve
 * reference "…": pulling from host 127.0.0.1:5000 failed with status code [manifests v1]: 401 Unauthorized`.
 * With no other signal, this is the one rule that reads a message, and only for an UNKNOWN PullImage.
 */
const PULL_REFUSED_FOR_AUTH = /\b(401 Unauthorized|403 Forbidden)\b|\bauthorization failed\b/i;

/** The code of a failed call: by gRPC status first, then the single message rule above. */
function classify(grpcCode: number | undefined, method: string, details: string): CriErrorCode {
  const code = grpcCode === undefined ? 'Unknown' : (BY_STATUS.get(grpcCode) ?? 'Unknown');
  if (code === 'Unknown' && method === 'PullImage' && PULL_REFUSED_FOR_AUTH.test(details)) return 'AuthFailed';
  return code;
}

export class CriError extends ClassifiedError {
  override readonly name = 'CriError';
  readonly code: CriErrorCode;
  /** The CRI method, e.g. `PullImage` (`connect` for endpoint errors). */
  readonly method: string;
  /** The gRPC status code, when the failure came from a gRPC status. */
  readonly grpcCode: number | undefined;

  constructor(code: CriErrorCode, method: string, message: string, grpcCode?: number) {
    super(message);
    this.code = code;
    this.method = method;
    this.grpcCode = grpcCode;
  }

  /** `transient` when the same call may succeed later (with backoff), else `permanent`. */
  get retryClass(): RetryClass {
    return RETRYABLE.has(this.code) ? 'transient' : 'permanent';
  }
}

/**
 * Maps a failed call's error (a grpc-js ServiceError, or anything thrown) to a CriError. `secrets` are
 * the credential values of the call: any of them that the runtime echoes in its message is blanked out.
 */
export function criErrorFrom(err: unknown, method: string, secrets: readonly string[] = []): CriError {
  if (err instanceof CriError) return err;
  const grpcCode = statusCodeOf(err);
  const details = redact(detailsOf(err), secrets);
  return new CriError(classify(grpcCode, method, details), method, `CRI ${method}: ${details}`, grpcCode);
}

export function abortedError(method: string): CriError {
  return new CriError('Aborted', method, `CRI ${method}: aborted`);
}

export function isCriError(err: unknown, ...codes: CriErrorCode[]): err is CriError {
  return err instanceof CriError && (codes.length === 0 || codes.includes(err.code));
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('[redacted]');
  return out;
}

function statusCodeOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'number' ? err.code : undefined;
}

function detailsOf(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'details' in err && typeof err.details === 'string' && err.details !== '') {
    return err.details;
  }
  return errorMessage(err);
}
