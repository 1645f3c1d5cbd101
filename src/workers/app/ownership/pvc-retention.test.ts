import { describe, expect, it } from 'vitest';
import { makeApp, podFor } from '../../../../test/unit/app/fixtures.ts';
import { API_VERSION } from '../../../api/group.ts';
import type { OwnerReference } from '../../../kube/types.ts';
import { claimsToCreate, desiredClaimOwners, retentionActions } from './pvc-retention.ts';

const claims = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }];
const other: OwnerReference = { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'cm' };

describe('desiredClaimOwners', () => {
  it.each([
    ['Retain', 'Retain', false, []],
    ['Retain', 'Retain', true, []],
    ['Delete', 'Retain', false, ['App']],
    ['Delete', 'Retain', true, ['App']],
    ['Retain', 'Delete', false, []],
    ['Retain', 'Delete', true, ['Pod']],
    ['Delete', 'Delete', true, ['Pod']],
    ['Delete', 'Delete', false, ['App']],
  ] as const)('whenDeleted %s, whenScaled %s, condemned %s → %j', (whenDeleted, whenScaled, condemned, kinds) => {
    const app = makeApp('web', { volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled } });
    const pod = podFor(app, 4, 'r1');
    const stale: OwnerReference = { apiVersion: 'v1', kind: 'Pod', name: 'web-4', uid: 'old-pod' };
    const owners = desiredClaimOwners(app, [other, stale], 4, condemned ? pod : undefined);
    expect(owners[0]).toEqual(other);
    expect(owners.slice(1).map((o) => o.kind)).toEqual(kinds);
  });
});

describe('claimsToCreate', () => {
  it('creates missing claims with the policy owners and waits for a terminating one', () => {
    const app = makeApp('web', { volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } });
    const none = claimsToCreate(app, new Map(), 0);
    expect(none.terminating).toBe(false);
    expect(none.create).toMatchObject([
      { kind: 'createPvc', pvc: { metadata: { name: 'data-web-0', ownerReferences: [{ kind: 'App', uid: app.metadata.uid }] } } },
    ]);
    const dying = claimsToCreate(
      app,
      new Map([['data-web-0', { metadata: { name: 'data-web-0', namespace: 'ns', uid: 'pvc-0', resourceVersion: '1', deletionTimestamp: 'T' } }]]),
      0,
    );
    expect(dying).toEqual({ create: [], terminating: true });
  });
});

describe('the claim owner is its controller', () => {
  const app = makeApp('web', { volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' } });
  const pod = podFor(app, 4, 'r1');
  const appRef: OwnerReference = { apiVersion: API_VERSION, kind: 'App', name: 'web', uid: app.metadata.uid };
  const podRef: OwnerReference = { apiVersion: 'v1', kind: 'Pod', name: 'web-4', uid: pod.metadata.uid };
  const foreign: OwnerReference = { apiVersion: 'example.com/v1', kind: 'Keeper', name: 'k', uid: 'k1', controller: true, blockOwnerDeletion: true };
  const flags = (r: OwnerReference | undefined) => r && { uid: r.uid, controller: r.controller, blockOwnerDeletion: r.blockOwnerDeletion };

  it.each([
    ['no references, in range', [], false, [{ uid: app.metadata.uid, controller: true, blockOwnerDeletion: true }]],
    ['the App reference with controller cleared', [appRef], false, [{ uid: app.metadata.uid, controller: true, blockOwnerDeletion: true }]],
    ['the App as controller already', [{ ...appRef, controller: true }], false, [{ uid: app.metadata.uid, controller: true, blockOwnerDeletion: undefined }]],
    [
      'condemned: the App reference goes, the pod controls',
      [{ ...appRef, controller: true }],
      true,
      [{ uid: pod.metadata.uid, controller: true, blockOwnerDeletion: true }],
    ],
    ['condemned: the pod reference with controller cleared', [podRef], true, [{ uid: pod.metadata.uid, controller: true, blockOwnerDeletion: true }]],
    ['another controller: ours removed, none added', [foreign, appRef], false, [{ uid: 'k1', controller: true, blockOwnerDeletion: true }]],
  ] as const)('%s', (_, existing, condemned, want) => {
    const owners = desiredClaimOwners(app, existing, 4, condemned ? pod : undefined);
    expect(owners.map(flags)).toEqual(want);
  });

  it('a cleared controller flag is a change to write; an up-to-date claim is not', () => {
    const claim = (ownerReferences: OwnerReference[]) =>
      new Map([['data-web-0', { metadata: { name: 'data-web-0', namespace: 'ns', uid: 'pvc-0', resourceVersion: '7', ownerReferences } }]]);
    const inRange = makeApp('web', { volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } });
    const cleared = retentionActions(inRange, claim([{ ...appRef, uid: inRange.metadata.uid }]), 0, undefined);
    expect(cleared).toEqual([
      {
        kind: 'setPvcOwners',
        name: 'data-web-0',
        resourceVersion: '7',
        ownerReferences: [expect.objectContaining({ uid: inRange.metadata.uid, controller: true, blockOwnerDeletion: true })],
      },
    ]);
    expect(retentionActions(inRange, claim([{ ...appRef, uid: inRange.metadata.uid, controller: true, blockOwnerDeletion: true }]), 0, undefined)).toEqual([]);
  });
});
