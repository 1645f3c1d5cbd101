import { describe, expect, it } from 'vitest';
import { fixedSizeStorageClass, type BindingMode, type Claim } from './pv-plan.ts';
import { pendingResize, resizeFinished, resizeStarted } from './resize-plan.ts';

const classes = new Map<string, BindingMode>([['standard', 'WaitForFirstConsumer']]);

function claim(
  request: string,
  capacity: string | undefined,
  over: { phase?: string; volumeName?: string; storageClassName?: string; deleting?: boolean } = {},
): Claim {
  return {
    metadata: { name: 'data-web-0', namespace: 'ns', uid: 'c-1', ...(over.deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}) },
    spec: {
      storageClassName: over.storageClassName ?? 'standard',
      ...('volumeName' in over ? (over.volumeName ? { volumeName: over.volumeName } : {}) : { volumeName: 'pvc-c-1' }),
      resources: { requests: { storage: request } },
    },
    status: { phase: over.phase ?? 'Bound', ...(capacity ? { capacity: { storage: capacity } } : {}) },
  };
}

describe('the sandbox volume resizer', () => {
  it.each<[string, Claim, string | undefined]>([
    ['a bound claim asking for more than its capacity', claim('2Gi', '1Gi'), '2Gi'],
    ['the same size in another unit', claim('1024Mi', '1Gi'), undefined],
    ['already grown', claim('2Gi', '2Gi'), undefined],
    ['not bound yet', claim('2Gi', undefined, { phase: 'Pending', volumeName: '' }), undefined],
    ['no capacity reported yet', claim('2Gi', undefined), undefined],
    ['a class of another provisioner', claim('2Gi', '1Gi', { storageClassName: 'other' }), undefined],
    ['being deleted', claim('2Gi', '1Gi', { deleting: true }), undefined],
  ])('%s', (_name, c, want) => {
    expect(pendingResize(c, classes)).toBe(want);
  });

  it('writes the claim status as a resizer finishing without node expansion: in progress, then the new capacity and nothing pending', () => {
    expect(resizeStarted('2Gi')['status']).toMatchObject({
      allocatedResources: { storage: '2Gi' },
      allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
      conditions: [{ type: 'Resizing', status: 'True' }],
    });
    expect(resizeFinished('2Gi')).toEqual({
      status: { capacity: { storage: '2Gi' }, allocatedResources: { storage: '2Gi' }, allocatedResourceStatuses: null, conditions: null },
    });
  });

  it('installs a class that does not allow expansion', () => {
    expect(fixedSizeStorageClass()).toMatchObject({
      metadata: { name: 'standard-fixed-size' },
      allowVolumeExpansion: false,
      volumeBindingMode: 'WaitForFirstConsumer',
    });
  });
});
