import { describe, expect, it } from 'vitest';
import { needsVolume, shouldDelete, storageClasses, volumeFor, type BindingMode, type Claim, type Volume } from './pv-plan.ts';

function claim(over: Partial<Claim['spec']> = {}, status?: string, deleting = false, node?: string): Claim {
  return {
    metadata: {
      name: 'data-web-0',
      namespace: 'ns',
      uid: 'c-1',
      ...(deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}),
      ...(node ? { annotations: { 'volume.kubernetes.io/selected-node': node } } : {}),
    },
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
  const ours = new Map<string, BindingMode>([
    ['standard', 'WaitForFirstConsumer'],
    ['standard-immediate', 'Immediate'],
  ]);
  const immediate = { storageClassName: 'standard-immediate' };

  it('installs a default class binding on the first consumer and a non-default one binding at once', () => {
    expect(storageClasses()).toMatchObject([
      {
        metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
        provisioner: 'sandbox.ebb.dev/hostpath',
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'WaitForFirstConsumer',
      },
      { metadata: { name: 'standard-immediate' }, provisioner: 'sandbox.ebb.dev/hostpath', reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' },
    ]);
    expect(storageClasses()[1]?.['metadata']).not.toHaveProperty('annotations');
  });

  it.each<[string, Claim, boolean]>([
    ['a pending claim of the Immediate class', claim(immediate), true],
    ['an Immediate claim with no phase yet', claim(immediate, undefined), true],
    ['a WaitForFirstConsumer claim before the scheduler picked a node', claim(), false],
    ['a WaitForFirstConsumer claim with a selected node', claim({}, 'Pending', false, 'sim-node-1'), true],
    ['a claim of another class', claim({ storageClassName: 'fast' }, 'Pending', false, 'sim-node-1'), false],
    ['a claim without a class', claim({ storageClassName: undefined }), false],
    ['a claim already bound to a volume', claim({ volumeName: 'pv-1' }, 'Bound', false, 'sim-node-1'), false],
    ['a claim being deleted', claim(immediate, 'Pending', true), false],
  ])('%s needs a volume: %s', (_name, c, want) => {
    expect(needsVolume(c, ours)).toBe(want);
  });

  it('pins the volume of a claim with a selected node to that node', () => {
    expect(volumeFor(claim({}, 'Pending', false, 'sim-node-1'), '/sandbox/volumes')).toMatchObject({
      spec: {
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['sim-node-1'] }] }] } },
      },
    });
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
