import { describe, expect, it } from 'vitest';
import { makeApp, podFor } from '../../../test/unit/app/fixtures.ts';
import type { OwnerReference } from '../../kube/types.ts';
import { claimsToCreate, desiredClaimOwners } from './pvc-retention.ts';

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
