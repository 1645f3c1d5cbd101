import { describe, expect, it } from 'vitest';
import { needsVolume, shouldDelete, storageClass, volumeFor, type Claim, type Volume } from './pv-plan.ts';

function claim(over: Partial<Claim['spec']> = {}, status?: string, deleting = false): Claim {
  return {
    metadata: { name: 'data-web-0', namespace: 'ns', uid: 'c-1', ...(deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}) },
    spec: { storageClassName: 'standard', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } }, ...over },
    ...(status ? { status: { phase: status } } : {}),
  };
}

function volume(
  phase: string,
  annotations: Record<string, string> = { 'pv.kubernetes.io/provisioned-by': 'sandbox.ebb.dev/hostpath' },
  policy = 'Delete',
): Volume {
  return { metadata: { name: 'pvc-c-1', annotations }, spec: { persistentVolumeReclaimPolicy: policy }, status: { phase } };
}

describe('provisioning decisions', () => {
  const ours = new Set(['standard']);

  it('is the default class, provisioned by the sandbox, binding immediately', () => {
    expect(storageClass()).toMatchObject({
      metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'sandbox.ebb.dev/hostpath',
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    });
  });

  it.each<[string, Claim, boolean]>([
    ['a pending claim of our class', claim(), true],
    ['a claim with no phase yet', claim({}, undefined), true],
    ['a claim of another class', claim({ storageClassName: 'fast' }), false],
    ['a claim without a class', claim({ storageClassName: undefined }), false],
    ['a claim already bound to a volume', claim({ volumeName: 'pv-1' }, 'Bound'), false],
    ['a claim being deleted', claim({}, 'Pending', true), false],
  ])('%s needs a volume: %s', (_name, c, want) => {
    expect(needsVolume(c, ours)).toBe(want);
  });

  it('makes a hostPath PV pre-bound to the claim, sized from its request', () => {
    expect(volumeFor(claim(), '/sandbox/volumes')).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-c-1', annotations: { 'pv.kubernetes.io/provisioned-by': 'sandbox.ebb.dev/hostpath' } },
      spec: {
        capacity: { storage: '5Gi' },
        accessModes: ['ReadWriteOnce'],
        volumeMode: 'Filesystem',
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'standard',
        hostPath: { path: '/sandbox/volumes/pvc-c-1', type: 'DirectoryOrCreate' },
        claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'data-web-0', uid: 'c-1' },
      },
    });
  });

  it.each<[string, Volume, boolean]>([
    ['a released volume of ours', volume('Released'), true],
    ['a bound volume', volume('Bound'), false],
    ['a released volume someone else provisioned', volume('Released', {}), false],
    ['a released volume to retain', volume('Released', undefined, 'Retain'), false],
  ])('%s is deleted: %s', (_name, pv, want) => {
    expect(shouldDelete(pv)).toBe(want);
  });
});
