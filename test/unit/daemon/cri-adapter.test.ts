import { describe, expect, it } from 'vitest';
import { CriError, type CriErrorCode } from '../../../src/cri/client.ts';
import { runtimeErrorOf, socketPathOf } from '../../../src/daemon/cri-adapter.ts';

describe('runtimeErrorOf', () => {
  it.each<[CriErrorCode, string, string, boolean]>([
    ['Unavailable', 'CRI PullImage: connect ENOENT', 'Unavailable', true],
    ['DeadlineExceeded', 'CRI PullImage: deadline exceeded', 'Timeout', true],
    ['Aborted', 'CRI PullImage: aborted', 'Aborted', true],
    ['NotFound', 'CRI ImageStatus: not found', 'NotFound', true],
    ['InvalidArgument', 'CRI PullImage: failed to parse image reference', 'Runtime', false],
    ['Unimplemented', 'CRI PullImage: unknown service', 'Runtime', false],
    ['Unknown', 'failed to pull and unpack image "r/app:1": failed to resolve reference "r/app:1": r/app:1: not found', 'NotFound', true],
    ['Unknown', 'failed to resolve reference "r/app:1": simulated registry error: manifest unknown', 'NotFound', true],
    ['Unknown', 'failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized', 'Auth', true],
    ['Unknown', 'pull access denied, repository does not exist or may require authorization', 'NotFound', true],
    ['Unknown', 'failed to do request: dial tcp: lookup r.invalid: no such host', 'Runtime', true],
  ])('%s "%s" → %s', (code, message, expected, retryable) => {
    const e = runtimeErrorOf(new CriError(code, 'PullImage', message));
    expect(e).toMatchObject({ code: expected, retryable, message });
  });
});

describe('socketPathOf', () => {
  it.each([
    ['/run/containerd/containerd.sock', '/run/containerd/containerd.sock'],
    ['unix:///run/containerd/containerd.sock', '/run/containerd/containerd.sock'],
  ])('%s → %s', (endpoint, path) => expect(socketPathOf(endpoint)).toBe(path));
});
