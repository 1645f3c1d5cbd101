import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * The one place where gRPC failures of CRI calls become typed errors. Callers branch on `code`, never on
 * messages. A CriError keeps only the method, the gRPC status code and the runtime's status message: never
 * the request (it may hold registry credentials) nor the response metadata, so it is safe to log.
 */
export type CriErrorCode =
  /** The caller's AbortSignal fired; the call was cancelled. */
  | 'Aborted'
  /** The runtime rejected the request (e.g. an invalid image reference). Retrying cannot help. */
  | 'InvalidArgument'
  | 'NotFound'
  /** The call's deadline passed before the runtime answered. */
  | 'DeadlineExceeded'
  /** The runtime is not reachable (socket absent, runtime restarting, connection lost, client closed). */
  | 'Unavailable'
  /** The runtime does not implement the method (an older or different CRI version). */
  | 'Unimplemented'
  /** Anything else, notably registry failures: containerd reports a failed pull as UNKNOWN. */
  | 'Unknown';

export class CriError extends Error {
  override readonly name = 'CriError';
  readonly code: CriErrorCode;
  /** The CRI method, e.g. `PullImage`. */
  readonly method: string;
  /** The gRPC status code, when the failure came from a gRPC status. */
  readonly grpcCode: number | undefined;

  constructor(code: CriErrorCode, method: string, message: string, grpcCode?: number) {
    super(message);
    this.code = code;
    this.method = method;
    this.grpcCode = grpcCode;
  }

  /** Whether the same call may succeed later (with backoff). */
  get retryable(): boolean {
    return this.code === 'Unavailable' || this.code === 'DeadlineExceeded' || this.code === 'Unknown';
  }
}

const CODES: ReadonlyMap<number, CriErrorCode> = new Map<number, CriErrorCode>([
  [GrpcStatus.INVALID_ARGUMENT, 'InvalidArgument'],
  [GrpcStatus.NOT_FOUND, 'NotFound'],
  [GrpcStatus.DEADLINE_EXCEEDED, 'DeadlineExceeded'],
  [GrpcStatus.UNAVAILABLE, 'Unavailable'],
  // A cancellation we did not ask for: the runtime or the connection went away mid-call.
  [GrpcStatus.CANCELLED, 'Unavailable'],
  [GrpcStatus.UNIMPLEMENTED, 'Unimplemented'],
]);

/** Maps a failed call's error (a grpc-js ServiceError, or anything thrown) to a CriError. */
export function criErrorFrom(err: unknown, method: string): CriError {
  if (err instanceof CriError) return err;
  const grpcCode = statusCodeOf(err);
  const details = detailsOf(err);
  const code = grpcCode === undefined ? 'Unknown' : (CODES.get(grpcCode) ?? 'Unknown');
  return new CriError(code, method, `CRI ${method}: ${details}`, grpcCode);
}

export function abortedError(method: string): CriError {
  return new CriError('Aborted', method, `CRI ${method}: aborted`);
}

export function isCriError(err: unknown, ...codes: CriErrorCode[]): err is CriError {
  return err instanceof CriError && (codes.length === 0 || codes.includes(err.code));
}

function statusCodeOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'number' ? err.code : undefined;
}

function detailsOf(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'details' in err && typeof err.details === 'string' && err.details !== '') {
    return err.details;
  }
  return err instanceof Error ? err.message : String(err);
}
