import { describe, expect, it } from 'vitest';
import { metaFingerprint } from './fingerprint.ts';
import type { KubeObject } from '../kube/types.ts';

const base: KubeObject = {
  metadata: {
    name: 'web',
    namespace: 'a',
    uid: 'u1',
    generation: 3,
    labels: { a: '1', b: '2' },
    annotations: { x: 'y' },
    finalizers: ['f'],
    ownerReferences: [],
  },
};
const withMeta = (m: Partial<NonNullable<KubeObject['metadata']>>): KubeObject => ({ metadata: { ...base.metadata, ...m } });

describe('metaFingerprint', () => {
  it('ignores what a status-only update changes, and the order of map keys', () => {
    const statusOnly = { ...withMeta({ labels: { b: '2', a: '1' } }), status: { readyReplicas: 2 } } as KubeObject;
    expect(metaFingerprint(statusOnly)).toBe(metaFingerprint(base));
  });

  it.each([
    ['generation', { generation: 4 }],
    ['deletionTimestamp', { deletionTimestamp: '2026-01-01T00:00:00Z' }],
    ['a label value', { labels: { a: '1', b: '3' } }],
    ['an annotation', { annotations: {} }],
    ['finalizers', { finalizers: [] }],
    ['an owner', { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'o', uid: 'o', controller: true }] }],
    ['the uid (deleted and created again)', { uid: 'u2' }],
  ])('changes with %s', (_what, m) => {
    expect(metaFingerprint(withMeta(m))).not.toBe(metaFingerprint(base));
  });
});
