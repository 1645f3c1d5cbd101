import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, kubeErrorFromStatus, parseRetryAfter, unavailable } from './errors.ts';

const status = (code: number, reason: string, message: string) => kubeErrorFromStatus(code, { kind: 'Status', reason, message }, 'create pod web-2');

describe('apiserver refusals are classified once', () => {
  it('a ResourceQuota refusal heals with time; other 403s need a change', () => {
    const quota = status(403, 'Forbidden', 'pods "web-2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2');
    expect(quota.code).toBe('QuotaExceeded');
    expect(quota.retryClass).toBe('heals');

    const podSecurity = status(403, 'Forbidden', 'pods "web-2" is forbidden: violates PodSecurity "restricted:latest": privileged');
    expect(podSecurity.code).toBe('Forbidden');
    expect(podSecurity.retryClass).toBe('permanent');
  });

  it('an invalid object or a policy denial is permanent', () => {
    const invalid = status(422, 'Invalid', 'Pod "web-2" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "lots"');
    expect(invalid.code).toBe('Invalid');
    expect(invalid.retryClass).toBe('permanent');
  });

  it('rate limits, server errors (a webhook that is down) and an unreachable apiserver heal', () => {
    expect(status(429, 'TooManyRequests', 'slow down').retryClass).toBe('heals');
    const webhookDown = status(500, 'InternalError', 'Internal error occurred: failed calling webhook "check.example.com": connection refused');
    expect(webhookDown.code).toBe('ServerError');
    expect(webhookDown.retryClass).toBe('heals');
    expect(unavailable('create pod web-2', new Error('ECONNREFUSED')).retryClass).toBe('heals');
  });

  it('a 401 heals: a rotated or expired token is read again on the next attempt', () => {
    const err = status(401, 'Unauthorized', 'Unauthorized');
    expect(err.code).toBe('Unauthorized');
    expect(err.retryClass).toBe('heals');
  });

  it('a dry run that a webhook with side effects cannot join is told apart from a bad request', () => {
    const err = status(400, 'BadRequest', 'admission webhook "audit.example.com" does not support dry run');
    expect(err.code).toBe('DryRunUnsupported');
    expect(status(400, 'BadRequest', 'the body is not a Pod').code).toBe('BadRequest');
  });

  it('a conflict is neither permanent nor healing by time: it needs a re-read', () => {
    const conflict = status(409, 'Conflict', 'the object has been modified');
    expect(conflict.code).toBe('Conflict');
    expect(conflict.retryClass).toBe('reread');
  });
});

describe('KubeError.detail', () => {
  it("is the apiserver's message without the request line", () => {
    const err = status(422, 'Invalid', 'Pod "web-2" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 0');
    expect(err.message).toBe('create pod web-2: Pod "web-2" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 0');
    expect(err.detail).toBe('Pod "web-2" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 0');
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delay-seconds and HTTP dates, capped, and ignores what it cannot read', () => {
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('99999', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('travels on the KubeError of a 429', () => {
    expect(kubeErrorFromStatus(429, {}, 'list pods', 2_000).retryAfterMs).toBe(2_000);
  });
});
