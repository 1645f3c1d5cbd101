import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { criApiVersion, upstreamCriProto } from './cri-api.ts';
import { compareProtos } from './proto-compare.ts';

/** The pod-sandbox calls the sandbox makes to stop a real node's pods, against the published runtime.v1 definition. */
describe('real-node CRI proto', () => {
  it('declares its messages, fields and rpcs with the published names, numbers, types and labels', async () => {
    const upstream = await upstreamCriProto(await criApiVersion(), AbortSignal.timeout(120_000));
    const proto = path.join(import.meta.dirname, '..', '..', 'harness', 'sandbox', 'real-node', 'cri-pods.proto');
    expect(compareProtos([proto], upstream)).toEqual([]);
  }, 150_000);
});
