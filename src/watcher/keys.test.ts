import { describe, expect, it } from 'vitest';
import { appKey, entryOwnerKeys, imageListKey, imagePullJobKey, podOwnerKey } from './keys.ts';
import type { KubeObject } from '../kube/types.ts';

const owned = (kind: string, apiVersion: string, controller = true): KubeObject => ({
  metadata: { name: 'web-0', namespace: 'ns', ownerReferences: [{ apiVersion, kind, name: 'web', uid: 'u-web', controller }] },
});

describe('podOwnerKey', () => {
  it.each<[string, KubeObject, ReturnType<typeof podOwnerKey>]>([
    ['controller App ref', owned('App', 'apps.ebb.dev/v1alpha1'), { kind: 'App', namespace: 'ns', name: 'web' }],
    ['App of a future version', owned('App', 'apps.ebb.dev/v1'), { kind: 'App', namespace: 'ns', name: 'web' }],
    ['StatefulSet controller', owned('StatefulSet', 'apps/v1'), undefined],
    ['App kind of another group', owned('App', 'example.com/v1'), undefined],
    ['label only (orphan)', { metadata: { name: 'p', namespace: 'ns', labels: { 'apps.ebb.dev/app': 'db' } } }, { kind: 'App', namespace: 'ns', name: 'db' }],
    ['no owner, no label', { metadata: { name: 'p', namespace: 'ns' } }, undefined],
    ['no namespace', { metadata: { name: 'p' } }, undefined],
  ])('%s', (_name, pod, expected) => {
    expect(podOwnerKey(pod)).toEqual(expected);
  });

  it('ignores a non-controller App reference when another controller owns the pod', () => {
    const pod: KubeObject = {
      metadata: {
        namespace: 'ns',
        ownerReferences: [
          { apiVersion: 'apps.ebb.dev/v1alpha1', kind: 'App', name: 'web', uid: 'u-web', controller: false },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u-rs', controller: true },
        ],
      },
    };
    expect(podOwnerKey(pod)).toBeUndefined();
  });
});

describe('object keys', () => {
  it('maps Apps and ImageLists', () => {
    const app = appKey({ metadata: { name: 'a', namespace: 'n' } });
    const il = imageListKey({ metadata: { name: 'node-1' } });
    expect(app).toEqual({ kind: 'App', namespace: 'n', name: 'a' });
    expect(il).toEqual({ kind: 'ImageList', namespace: '', name: 'node-1' });
    expect(appKey({ metadata: { name: 'a' } })).toBeUndefined();
  });
});

describe('entryOwnerKeys', () => {
  const list = (...managers: string[]): KubeObject => ({ metadata: { name: 'node-1', managedFields: managers.map((manager) => ({ manager })) } });

  it.each<[string, KubeObject, string[], string[]]>([
    [
      'the Apps of pre-warm managers, each once',
      list('ebb-prewarm/a/web', 'ebb-daemon', 'ebb-prewarm/b/db', 'ebb-prewarm/a/web', 'kubectl'),
      [],
      ['a/web', 'b/db'],
    ],
    ['only in the watched namespaces', list('ebb-prewarm/a/web', 'ebb-prewarm/b/db'), ['b'], ['b/db']],
    ['no managed fields', { metadata: { name: 'node-1' } }, [], []],
    ['managers that only look alike', list('ebb-prewarm/a', 'ebb-prewarm/A/web', 'x-ebb-prewarm/a/web'), [], []],
  ])('%s', (_what, obj, namespaces, want) => {
    expect(entryOwnerKeys(obj, namespaces)).toEqual(want.map((k) => ({ kind: 'App', namespace: k.split('/')[0], name: k.split('/')[1] })));
  });
});

describe('entryOwnerKeys and ImagePullJobs', () => {
  it('maps pull-job managers to their jobs, beside the Apps, in the watched namespaces only', () => {
    const obj: KubeObject = {
      metadata: {
        name: 'node-1',
        managedFields: ['ebb-pulljob/ops/warm.v2', 'ebb-prewarm/ops/web', 'ebb-pulljob/other/x', 'ebb-pulljob/ops'].map((manager) => ({ manager })),
      },
    };
    expect(entryOwnerKeys(obj, ['ops'])).toEqual([
      { kind: 'ImagePullJob', namespace: 'ops', name: 'warm.v2' },
      { kind: 'App', namespace: 'ops', name: 'web' },
    ]);
  });

  it('keys an ImagePullJob by namespace and name', () => {
    expect(imagePullJobKey({ metadata: { name: 'warm', namespace: 'ops' } })).toEqual({ kind: 'ImagePullJob', namespace: 'ops', name: 'warm' });
  });
});
