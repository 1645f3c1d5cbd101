import { describe, expect, it } from 'vitest';
import { parseWorkerConfig } from '../../../src/workers/config.ts';

const base = { KUBECONFIG: '/nowhere/kubeconfig', EBB_REDIS_URL: 'redis://127.0.0.1:1' };

describe('EBB_KUBE_PROTOBUF', () => {
  it('reads pods in protobuf unless set to off, and refuses other values', () => {
    expect(parseWorkerConfig(base).kube.protobuf).toBe(true);
    expect(parseWorkerConfig({ ...base, EBB_KUBE_PROTOBUF: 'off' }).kube.protobuf).toBe(false);
    expect(() => parseWorkerConfig({ ...base, EBB_KUBE_PROTOBUF: 'json' })).toThrow(/EBB_KUBE_PROTOBUF/);
  });
});
