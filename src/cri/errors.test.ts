import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { CriError, criErrorFrom, isCriError, type CriErrorCode } from './errors.ts';

/** A grpc-js ServiceError as a failed call hands it over. */
function grpcError(code: status, details: string): Error {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata: {} });
}

// Messages containerd 1.6.20 answered in test/runtime (registry on 127.0.0.1).
const MISSING_TAG =
  'failed to pull and unpack image "127.0.0.1:5000/ebb/app:nope": failed to resolve reference "127.0.0.1:5000/ebb/app:nope": 127.0.0.1:5000/ebb/app:nope: not found';
const AUTH_REFUSED =
  'failed to pull and unpack image "127.0.0.1:5000/ebb/app:v1": failed to resolve reference "127.0.0.1:5000/ebb/app:v1": pulling from host 127.0.0.1:5000 failed with status code [manifests v1]: 401 Unauthorized';
const REGISTRY_DOWN =
  'failed to pull and unpack image "127.0.0.1:1/ebb/app:v1": failed to resolve reference "127.0.0.1:1/ebb/app:v1": failed to do request: Head "http://127.0.0.1:1/v2/ebb/app/manifests/v1": dial tcp 127.0.0.1:1: connect: connection refused';

describe('criErrorFrom', () => {
  it.each<[status, CriErrorCode, boolean]>([
    [status.NOT_FOUND, 'ImageNotFound', false],
    [status.UNAUTHENTICATED, 'AuthFailed', false],
    [status.PERMISSION_DENIED, 'AuthFailed', false],
    [status.UNAVAILABLE, 'Unavailable', true],
    [status.DEADLINE_EXCEEDED, 'DeadlineExceeded', true],
    [status.CANCELLED, 'Cancelled', true],
    [status.INVALID_ARGUMENT, 'InvalidArgument', false],
    [status.UNKNOWN, 'Unknown', true],
    [status.INTERNAL, 'Internal', true],
    [status.UNIMPLEMENTED, 'Unimplemented', false],
    [status.FAILED_PRECONDITION, 'FailedPrecondition', false],
    [status.RESOURCE_EXHAUSTED, 'ResourceExhausted', true],
    [status.ABORTED, 'RuntimeAborted', true],
  ])('maps gRPC %s to %s (retryable %s)', (grpcCode, code, retryable) => {
    const err = criErrorFrom(grpcError(grpcCode, 'boom'), 'ImageStatus');

    expect(err).toBeInstanceOf(CriError);
    expect(err).toMatchObject({ code, grpcCode, method: 'ImageStatus', retryClass: retryable ? 'transient' : 'permanent', message: 'CRI ImageStatus: boom' });
  });

  it("classifies containerd's answers to a pull by their gRPC code first", () => {
    expect(criErrorFrom(grpcError(status.NOT_FOUND, MISSING_TAG), 'PullImage').code).toBe('ImageNotFound');
    expect(criErrorFrom(grpcError(status.UNKNOWN, REGISTRY_DOWN), 'PullImage').code).toBe('Unknown');
  });

  it('reads the registry status from the message only for an UNKNOWN pull (containerd gives no other signal)', () => {
    const refused = criErrorFrom(grpcError(status.UNKNOWN, AUTH_REFUSED), 'PullImage');
    expect(refused).toMatchObject({ code: 'AuthFailed', retryClass: 'permanent', grpcCode: status.UNKNOWN });
    expect(refused.message).toContain('401 Unauthorized');

    expect(criErrorFrom(grpcError(status.UNKNOWN, AUTH_REFUSED), 'ImageStatus').code).toBe('Unknown');
    expect(criErrorFrom(grpcError(status.UNAVAILABLE, AUTH_REFUSED), 'PullImage').code).toBe('Unavailable');
  });

  it('maps an error without a gRPC status to Unknown', () => {
    expect(criErrorFrom(new Error('serialization failure'), 'ListImages')).toMatchObject({ code: 'Unknown', grpcCode: undefined });
    expect(criErrorFrom('odd', 'ListImages').message).toBe('CRI ListImages: odd');
  });

  it('blanks out credentials the runtime echoes, keeping nothing else of the request', () => {
    const err = criErrorFrom(grpcError(status.UNKNOWN, 'bad token s3cret-token for robot'), 'PullImage', ['s3cret-token', '']);

    expect(err.message).toBe('CRI PullImage: bad token [redacted] for robot');
    expect(Object.keys(err).sort()).toEqual(['code', 'grpcCode', 'method', 'name']);
  });

  it('passes a CriError through unchanged and tells codes apart with isCriError', () => {
    const original = new CriError('Aborted', 'PullImage', 'CRI PullImage: aborted');

    expect(criErrorFrom(original, 'PullImage')).toBe(original);
    expect(isCriError(original)).toBe(true);
    expect(isCriError(original, 'Unavailable', 'Aborted')).toBe(true);
    expect(isCriError(original, 'Unavailable')).toBe(false);
    expect(isCriError(new Error('x'))).toBe(false);
  });
});
