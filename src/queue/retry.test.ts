import { ClassifiedError } from '../common/errors.ts';
import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { KubeError, kubeErrorFromStatus, type KubeErrorCode } from '../kube/errors.ts';
import { InvalidKeyError } from './names.ts';
import { backoffStrategy, retryAfterGivingUp, retryDecision, toJobError } from './retry.ts';

const kube = (code: KubeErrorCode, status: number): KubeError => new KubeError(code, status, `${code} happened`);
const policy = { baseMs: 100, capMs: 10_000 };

describe('retryDecision', () => {
  it.each<[string, unknown, string]>([
    ['BullMQ UnrecoverableError', new UnrecoverableError('bad spec'), 'unrecoverable'],
    ['an error named UnrecoverableError', Object.assign(new Error('x'), { name: 'UnrecoverableError' }), 'unrecoverable'],
    ['403 Forbidden', kube('Forbidden', 403), 'permanent'],
    ['422 Invalid', kube('Invalid', 422), 'permanent'],
    ['400 BadRequest', kube('BadRequest', 400), 'permanent'],
    [
      'an error classed permanent',
      new (class extends ClassifiedError {
        readonly retryClass = 'permanent';
      })('replicas < 0'),
      'permanent',
    ],
    ['a malformed job payload', new InvalidKeyError('bad key'), 'permanent'],
  ])('does not retry %s', (_what, error, reason) => {
    expect(retryDecision(error, 1, policy)).toEqual({ retry: false, reason });
  });

  it.each<[string, KubeError]>([
    ['409 Conflict', kube('Conflict', 409)],
    ['409 AlreadyExists', kube('AlreadyExists', 409)],
  ])('retries %s at once, whatever the attempt', (_what, error) => {
    for (const attempt of [1, 5, 50]) expect(retryDecision(error, attempt, policy)).toEqual({ retry: true, delayMs: 0, reason: 'conflict' });
  });

  it.each<[string, unknown]>([
    ['500', kube('ServerError', 500)],
    ['429', kube('TooManyRequests', 429)],
    ['401 (a rotated token: the next attempt reads credentials again)', kube('Unauthorized', 401)],
    ['404', kube('NotFound', 404)],
    ['unreachable apiserver', kube('Unavailable', 0)],
    ['a plain Error', new Error('boom')],
    ['a thrown string', 'boom'],
  ])('backs off on %s', (_what, error) => {
    const d = retryDecision(error, 3, { ...policy, random: () => 0.5 });
    expect(d.retry).toBe(true);
    expect(d.retry && d.reason).toBe('transient');
    expect(d.retry && d.delayMs).toBeGreaterThanOrEqual(100);
  });

  it("waits at least the apiserver's Retry-After, within the cap", () => {
    const asked = (ms: number): KubeError => kubeErrorFromStatus(429, { reason: 'TooManyRequests', message: 'slow down' }, 'list pods', ms);
    const at = (error: unknown): number => {
      const d = retryDecision(error, 1, { ...policy, random: () => 0 });
      return d.retry ? d.delayMs : -1;
    };
    expect(at(kube('TooManyRequests', 429))).toBe(100);
    expect(at(asked(7_000))).toBe(7_000);
    expect(at(asked(60_000))).toBe(10_000);
  });

  it('grows exponentially and is capped (upper bound with random = 1)', () => {
    const max = (attempt: number): number => {
      const d = retryDecision(new Error('x'), attempt, { ...policy, random: () => 1 });
      return d.retry ? d.delayMs : -1;
    };
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(max)).toEqual([200, 400, 800, 1_600, 3_200, 6_400, 10_000, 10_000, 10_000]);
  });

  it('never goes below the base (lower bound with random = 0) and jitters in between', () => {
    const d0 = retryDecision(new Error('x'), 6, { ...policy, random: () => 0 });
    expect(d0).toEqual({ retry: true, delayMs: 100, reason: 'transient' });
    const seen = new Set<number>();
    for (let i = 0; i < 50; i++) {
      const d = retryDecision(new Error('x'), 6, policy);
      if (d.retry) seen.add(d.delayMs);
    }
    expect(seen.size).toBeGreaterThan(10);
  });
});

describe('backoffStrategy', () => {
  it('speaks BullMQ: delay, 0 for at once, -1 for do not retry', () => {
    const strategy = backoffStrategy({ ...policy, random: () => 1 });
    expect(strategy(2, 'ebb-retry', new Error('x'))).toBe(400);
    expect(strategy(2, 'ebb-retry', kube('Conflict', 409))).toBe(0);
    expect(strategy(2, 'ebb-retry', kube('Forbidden', 403))).toBe(-1);
  });
});

describe('toJobError', () => {
  it('turns permanent errors into UnrecoverableError keeping the cause and the code', () => {
    const original = kube('Forbidden', 403);
    const err = toJobError(original, 1);
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err.message).toBe('Forbidden: Forbidden happened');
    expect(err.cause).toBe(original);
  });

  it('passes retryable errors through unchanged and wraps non-errors', () => {
    const original = kube('Conflict', 409);
    expect(toJobError(original, 1)).toBe(original);
    expect(toJobError('boom', 1)).toBeInstanceOf(Error);
  });
});

describe('retryAfterGivingUp', () => {
  it.each<[string, unknown]>([
    ['503 (apiserver unreachable)', kube('Unavailable', 503)],
    ['500', kube('ServerError', 500)],
    ['409 Conflict', kube('Conflict', 409)],
    ['a plain Error', new Error('socket hang up')],
  ])('brings the object back after the capped backoff for %s', (_what, error) => {
    const top = { ...policy, random: () => 1 };
    expect(retryAfterGivingUp(error, 20, top)).toBe(policy.capMs);
    expect(retryAfterGivingUp(error, 1, top)).toBe(200);
    expect(retryAfterGivingUp(error, 3, { ...policy, random: () => 0 })).toBe(policy.baseMs);
  });

  it.each<[string, unknown]>([
    ['403 Forbidden', kube('Forbidden', 403)],
    ['422 Invalid', kube('Invalid', 422)],
    ['UnrecoverableError', new UnrecoverableError('bad spec')],
    ['a malformed job payload', new InvalidKeyError('bad key')],
  ])('leaves the object to its next change for %s', (_what, error) => {
    expect(retryAfterGivingUp(error, 20, policy)).toBeUndefined();
  });
});
