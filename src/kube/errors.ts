/**
 * The one place where apiserver responses become typed errors. Callers branch on `code`, never on messages,
 * and a KubeError never carries request headers or bodies, so it is safe to log.
 */
export type KubeErrorCode =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'Conflict'
  | 'AlreadyExists'
  | 'Gone'
  | 'Invalid'
  | 'TooManyRequests'
  | 'ServerError'
  | 'Unavailable';

export class KubeError extends Error {
  override readonly name = 'KubeError';
  readonly code: KubeErrorCode;
  readonly status: number;
  readonly reason: string | undefined;
  constructor(code: KubeErrorCode, status: number, message: string, reason?: string) {
    super(message);
    this.code = code;
    this.status = status;
    this.reason = reason;
  }

  /** Errors that a retry cannot fix without a change of the request or of the object. */
  get permanent(): boolean {
    return this.code === 'BadRequest' || this.code === 'Forbidden' || this.code === 'Invalid' || this.code === 'Unauthorized';
  }
}

interface StatusBody {
  reason?: string;
  message?: string;
}

function codeFor(status: number, reason: string | undefined): KubeErrorCode {
  if (status === 409) return reason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict';
  const table: Record<number, KubeErrorCode> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    410: 'Gone',
    422: 'Invalid',
    429: 'TooManyRequests',
  };
  return table[status] ?? (status >= 500 ? 'ServerError' : 'BadRequest');
}

/** Builds a KubeError from an HTTP status and the (optional) metav1.Status body. */
export function kubeErrorFromStatus(status: number, body: unknown, what: string): KubeError {
  const parsed: StatusBody = typeof body === 'object' && body !== null ? body : {};
  const message = typeof parsed.message === 'string' ? parsed.message : `HTTP ${status}`;
  return new KubeError(codeFor(status, parsed.reason), status, `${what}: ${message}`, parsed.reason);
}

/** A network failure: the apiserver could not be reached at all. */
export function unavailable(what: string, cause: unknown): KubeError {
  const detail = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
  return new KubeError('Unavailable', 0, `${what}: apiserver unreachable (${detail})`);
}

export function isKubeError(err: unknown, ...codes: KubeErrorCode[]): err is KubeError {
  return err instanceof KubeError && (codes.length === 0 || codes.includes(err.code));
}
