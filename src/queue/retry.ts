import { DelayedError, UnrecoverableError, type BackoffStrategy, type Job, type Processor } from 'bullmq';
import { backoffMs } from '../common/backoff.ts';
import { retryClassOf } from '../common/errors.ts';
import { isKubeError } from '../kube/errors.ts';

/** What to do after a failed attempt. `attempt` counts attempts made so far (1 after the first failure). */
export type RetryDecision = { retry: false; reason: 'unrecoverable' | 'permanent' } | { retry: true; delayMs: number; reason: 'conflict' | 'transient' };

export interface RetryPolicy {
  /** Lower bound of every backoff delay and the first step of the exponential. */
  baseMs: number;
  /** Upper bound of every backoff delay. */
  capMs: number;
  random?: () => number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseMs: 1_000, capMs: 300_000 };

/**
 * The retry policy as a pure function of the error's retry class (`retryClassOf`):
 * - BullMQ's UnrecoverableError and `permanent` errors (KubeError 400/403/422, malformed job payloads)
 *   are not retried: a retry cannot fix them; the worker reports them.
 * - `reread` (409 Conflict, AlreadyExists) is retried at once: the next attempt re-reads the object.
 * - Everything else backs off exponentially with full jitter, between baseMs and capMs, per object (the
 *   attempt count lives on the object's one job); never sooner than the apiserver's `Retry-After` (a 429
 *   the client did not wait out itself), within capMs.
 */
export function retryDecision(error: unknown, attempt: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): RetryDecision {
  if (isUnrecoverable(error)) return { retry: false, reason: 'unrecoverable' };
  const retryClass = retryClassOf(error);
  if (retryClass === 'reread') return { retry: true, delayMs: 0, reason: 'conflict' };
  if (retryClass === 'permanent') return { retry: false, reason: 'permanent' };
  const backoff = backoffMs(Math.max(1, attempt), policy.baseMs, policy.capMs, policy.random);
  const asked = isKubeError(error) ? (error.retryAfterMs ?? 0) : 0;
  return { retry: true, delayMs: Math.max(backoff, Math.min(asked, policy.capMs)), reason: 'transient' };
}

function isUnrecoverable(error: unknown): boolean {
  return error instanceof UnrecoverableError || (error instanceof Error && error.name === 'UnrecoverableError');
}

/** The timer reason of an object whose job used all its attempts on errors that may heal. */
export const RETRY_AFTER_GIVING_UP = 'retry-after-giving-up';

/**
 * When an object whose job used all its attempts is reconciled again, or undefined for errors a retry cannot
 * fix (those wait for a change of the object). An error that may heal (the apiserver unreachable longer than
 * the retry budget, a conflict streak) is never final for the object: like client-go's rate-limited requeue,
 * it comes back after the capped backoff, without waiting for a watch event that may never come. The failed
 * job itself stays failed, for Bull Board and `ebb queue`.
 */
export function retryAfterGivingUp(error: unknown, attemptsMade: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number | undefined {
  return retryDecision(error, attemptsMade, policy).retry ? backoffMs(attemptsMade, policy.baseMs, policy.capMs, policy.random) : undefined;
}

/** The backoff type name the reconcile jobs carry; BullMQ calls the Worker's backoffStrategy for it. */
export const RECONCILE_BACKOFF_TYPE = 'ebb-retry';

/**
 * The Worker's `settings.backoffStrategy`: BullMQ retries after the returned delay, at once for 0, and
 * fails the job for -1. BullMQ only asks while attempts remain and the error is not an UnrecoverableError.
 */
export function backoffStrategy(policy: RetryPolicy = DEFAULT_RETRY_POLICY): BackoffStrategy {
  return (attemptsMade: number, _type?: string, err?: Error) => {
    const decision = retryDecision(err, attemptsMade, policy);
    return decision.retry ? decision.delayMs : -1;
  };
}

/**
 * Wraps a processor so that errors the policy will not retry leave as BullMQ UnrecoverableError (the
 * original error is its `cause`): the job fails at once, visibly so in Bull Board, without consuming
 * attempts. Non-Error throws become Errors, which BullMQ requires.
 */
export function withRetryPolicy<T, R>(processor: (job: Job<T, R>, token?: string, signal?: AbortSignal) => Promise<R>): Processor<T, R> {
  return async (job, token, signal) => {
    try {
      return await processor(job, token, signal);
    } catch (err) {
      throw toJobError(err, job.attemptsMade + 1);
    }
  };
}

export function toJobError(err: unknown, attempt: number): Error {
  // A job moved back to the delayed set by its processor (the namespace cap) is no failure.
  if (err instanceof DelayedError) return err;
  const error = err instanceof Error ? err : new Error(`non-error thrown: ${String(err)}`);
  const decision = retryDecision(error, attempt);
  if (decision.retry || isUnrecoverable(error)) return error;
  const code = isKubeError(error) ? `${error.code}: ` : '';
  const unrecoverable = new UnrecoverableError(`${code}${error.message}`);
  unrecoverable.cause = error;
  return unrecoverable;
}
