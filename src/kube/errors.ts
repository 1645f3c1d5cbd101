/**
 * The one place where apiserver responses become typed errors. Callers branch on `code` and `retryClass`
 * (`common/errors.ts`), never on messages, and a KubeError never carries request headers or bodies, so it is safe to log.
 * Two refusals share a status with others and are told apart here, by the only signal the apiserver gives
 * (the wording its admission plugins use): a ResourceQuota refusal (403, heals when usage drops or the quota
 * is raised) and a dry run a webhook cannot take part in (400).
 */
import { ClassifiedError, type RetryClass } from '../common/errors.ts';

export type KubeErrorCode =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  /** 403 from the ResourceQuota admission plugin: the namespace is out of quota now, not the request wrong. */
  | 'QuotaExceeded'
  /** 400 for a `dryRun` request: a webhook with side effects matches it, so the apiserver cannot dry-run it. */
  | 'DryRunUnsupported'
  | 'NotFound'
  | 'Conflict'
  | 'AlreadyExists'
  | 'Gone'
  | 'Invalid'
  | 'TooManyRequests'
  | 'ServerError'
  | 'Unavailable'
  /** The answer is larger than the byte cap the caller set for it (`tooLarge`): never buffered, never parsed. */
  | 'TooLarge';

export class KubeError extends ClassifiedError {
  override readonly name = 'KubeError';
  readonly code: KubeErrorCode;
  readonly status: number;
  readonly reason: string | undefined;
  /** The apiserver's own message (the field and value it refused), without the request line `message` starts with. */
  readonly detail: string;
  /** How long the apiserver asked the client to wait before the next request (`Retry-After`); set by kubeErrorFromStatus. */
  retryAfterMs: number | undefined;
  /** TooLarge: the cap the answer passed (`tooLarge`). */
  limitBytes: number | undefined;
  /** TooLarge: the cap was what was left of a read budget (`ByteBudget`), not a per-answer cap. */
  budget = false;
  constructor(code: KubeErrorCode, status: number, message: string, reason?: string, detail?: string) {
    super(message);
    this.code = code;
    this.status = status;
    this.reason = reason;
    this.detail = detail ?? message;
    this.retryAfterMs = undefined;
    this.limitBytes = undefined;
  }

  /**
   * Permanent: a retry cannot fix it without a change of the request or of the object (or of the cluster's
   * policy). Heals: quota, rate limits, server errors (a webhook that is down), no apiserver, and a 401 (a
   * token rotated or expired meanwhile: the next attempt reads the credentials again). Reread: a conflict, or
   * a name taken meanwhile.
   */
  get retryClass(): RetryClass {
    if (PERMANENT.has(this.code)) return 'permanent';
    if (HEALS.has(this.code)) return 'heals';
    return this.code === 'Conflict' || this.code === 'AlreadyExists' ? 'reread' : 'transient';
  }
}

const PERMANENT: ReadonlySet<KubeErrorCode> = new Set(['BadRequest', 'Forbidden', 'Invalid', 'DryRunUnsupported', 'TooLarge']);
const HEALS: ReadonlySet<KubeErrorCode> = new Set(['QuotaExceeded', 'TooManyRequests', 'ServerError', 'Unavailable', 'Unauthorized']);

interface StatusBody {
  reason?: string;
  message?: string;
}

const QUOTA_REFUSAL = /\bexceeded quota: /;
const DRY_RUN_REFUSAL = /\bdoes not support dry run\b/;

function codeFor(status: number, reason: string | undefined, message: string): KubeErrorCode {
  if (status === 409) return reason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict';
  if (status === 403 && QUOTA_REFUSAL.test(message)) return 'QuotaExceeded';
  if (status === 400 && DRY_RUN_REFUSAL.test(message)) return 'DryRunUnsupported';
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

/** The longest `Retry-After` taken at its word: a larger value (or a far date) counts as this. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/**
 * A `Retry-After` header in milliseconds: delay-seconds or an HTTP date (RFC 9110), capped at
 * MAX_RETRY_AFTER_MS; undefined when absent or unreadable.
 */
export function parseRetryAfter(header: string | null | undefined, now = Date.now()): number | undefined {
  const text = header?.trim();
  if (!text) return undefined;
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS) : undefined;
}

/** Builds a KubeError from an HTTP status, the (optional) metav1.Status body and the `Retry-After` header. */
export function kubeErrorFromStatus(status: number, body: unknown, what: string, retryAfterMs?: number): KubeError {
  const parsed: StatusBody = typeof body === 'object' && body !== null ? body : {};
  const message = typeof parsed.message === 'string' ? parsed.message : `HTTP ${status}`;
  const err = new KubeError(codeFor(status, parsed.reason, message), status, `${what}: ${message}`, parsed.reason, message);
  err.retryAfterMs = retryAfterMs;
  return err;
}

/** A network failure: the apiserver could not be reached at all. */
export function unavailable(what: string, cause: unknown): KubeError {
  const detail = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
  return new KubeError('Unavailable', 0, `${what}: apiserver unreachable (${detail})`);
}

/**
 * An answer over its byte cap (`RequestOptions.maxBytes`): refused from its Content-Length, or abandoned once
 * the bytes read passed the cap. Permanent: the same request gets the same answer until the objects shrink.
 * `budget` marks a cap that was what was left of a caller's budget over several requests, not a per-answer cap.
 */
export function tooLarge(what: string, limitBytes: number, budget = false): KubeError {
  const err = new KubeError('TooLarge', 0, `${what}: answer larger than ${limitBytes} bytes${budget ? ' (read budget spent)' : ''}`);
  err.limitBytes = limitBytes;
  err.budget = budget;
  return err;
}

export function isKubeError(err: unknown, ...codes: KubeErrorCode[]): err is KubeError {
  return err instanceof KubeError && (codes.length === 0 || codes.includes(err.code));
}
