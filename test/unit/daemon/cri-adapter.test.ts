import { describe, expect, it } from 'vitest';
import { CriError, type CriErrorCode } from '../../../src/cri/errors.ts';
import { runtimeErrorOf } from '../../../src/daemon/cri-adapter.ts';
import { RuntimeError } from '../../../src/daemon/runtime.ts';

describe('runtimeErrorOf', () => {
  it.each<[CriErrorCode, string, boolean]>([
    ['ImageNotFound', 'NotFound', true],
    ['AuthFailed', 'Auth', true],
    ['Unavailable', 'Unavailable', true],
    ['DeadlineExceeded', 'Timeout', true],
    ['Aborted', 'Aborted', true],
    ['Unknown', 'Runtime', true],
    ['InvalidArgument', 'Runtime', false],
  ])('%s → %s (retryable %s)', (cri, code, retryable) => {
    const e = runtimeErrorOf(new CriError(cri, 'PullImage', `CRI PullImage: ${cri}`));
    expect(e).toBeInstanceOf(RuntimeError);
    expect(e.code).toBe(code);
    expect(e.retryClass).toBe(retryable ? 'transient' : 'permanent');
    expect(e.message).toBe(`CRI PullImage: ${cri}`);
  });

  it('keeps a RuntimeError and wraps anything else as a retryable runtime failure', () => {
    const own = new RuntimeError('Auth', 'refused');
    expect(runtimeErrorOf(own)).toBe(own);
    expect(runtimeErrorOf(new Error('boom'))).toMatchObject({ code: 'Runtime', retryClass: 'transient', message: 'boom' });
  });
});
