import { describe, expect, it } from 'vitest';
import { kubeErrorFromStatus, unavailable } from './errors.ts';

const status = (code: number, reason: string, message: string) => kubeErrorFromStatus(code, { kind: 'Status', reason, message }, 'create pod web-2');

describe('apiserver refusals are classified once', () => {
  it('a ResourceQuota refusal heals with time; other 403s need a change', () => {
    const quota = status(403, 'Forbidden', 'pods "web-2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2');
    expect(quota.code).toBe('QuotaExceeded');
    expect(quota.heals).toBe(true);
    expect(quota.permanent).toBe(false);

    const podSecurity = status(403, 'Forbidden', 'pods "web-2" is forbidden: violates PodSecurity "restricted:latest": privileged');
    expect(podSecurity.code).toBe('Forbidden');
    expect(podSecurity.heals).toBe(false);
    expect(podSecurity.permanent).toBe(true);
  });

  it('an invalid object or a policy denial is permanent', () => {
    const invalid = status(422, 'Invalid', 'Pod "web-2" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "lots"');
    expect(invalid.code).toBe('Invalid');
    expect(invalid.permanent).toBe(true);
    expect(invalid.heals).toBe(false);
  });

  it('rate limits, server errors (a webhook that is down) and an unreachable apiserver heal', () => {
    expect(status(429, 'TooManyRequests', 'slow down').heals).toBe(true);
    const webhookDown = status(500, 'InternalError', 'Internal error occurred: failed calling webhook "check.example.com": connection refused');
    expect(webhookDown.code).toBe('ServerError');
    expect(webhookDown.heals).toBe(true);
    expect(unavailable('create pod web-2', new Error('ECONNREFUSED')).heals).toBe(true);
  });

  it('a dry run that a webhook with side effects cannot join is told apart from a bad request', () => {
    const err = status(400, 'BadRequest', 'admission webhook "audit.example.com" does not support dry run');
    expect(err.code).toBe('DryRunUnsupported');
    expect(status(400, 'BadRequest', 'the body is not a Pod').code).toBe('BadRequest');
  });

  it('a conflict is neither permanent nor healing by time: it needs a re-read', () => {
    const conflict = status(409, 'Conflict', 'the object has been modified');
    expect(conflict.code).toBe('Conflict');
    expect(conflict.permanent).toBe(false);
    expect(conflict.heals).toBe(false);
  });
});

describe('KubeError.detail', () => {
  it("is the apiserver's message without the request line", () => {
    const err = status(422, 'Invalid', 'Pod "web-2" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 0');
    expect(err.message).toBe('create pod web-2: Pod "web-2" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 0');
    expect(err.detail).toBe('Pod "web-2" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 0');
  });
});
