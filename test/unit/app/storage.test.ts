/** Scenario tests: claims from volumeClaimTemplates and the retention policy, through the fake garbage collector. */
import { describe, expect, it } from 'vitest';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const claims = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];
const claimNames = (s: Scenario): string[] => [...s.cluster.claims.values()].map((c) => c.metadata.name ?? '').sort();

describe('volume claims', () => {
  it.each(['OrderedReady', 'Parallel'] as const)('creates <claim>-<app>-<ordinal> before each pod and mounts it (%s)', async (podManagementPolicy) => {
    const s = new Scenario({ replicas: 2, podManagementPolicy, volumeClaimTemplates: claims });
    const order: string[] = [];
    const check = s.cluster.beforeCreatePod;
    s.cluster.beforeCreatePod = (pod) => {
      check?.(pod);
      order.push(`pod:${pod.metadata.name ?? ''}:${s.cluster.claims.has(`${NS}/data-${pod.metadata.name ?? ''}`)}`);
    };
    await s.runUntil((x) => x.converged());
    expect(s.violations).toEqual([]);
    expect(order).toEqual(['pod:web-0:true', 'pod:web-1:true']);
    expect(claimNames(s)).toEqual(['data-web-0', 'data-web-1']);
    const pod = s.cluster.pods.get(`${NS}/web-1`)!;
    expect(pod.spec?.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: 'data-web-1' } });
    const claim = s.cluster.claims.get(`${NS}/data-web-1`)!;
    expect(claim.metadata.labels).toMatchObject({ app: 'web', 'apps.ebb.dev/app': 'web' });
    expect(claim.metadata.ownerReferences).toBeUndefined();
  });

  it('whenScaled Delete: a condemned pod owns its claims, which go with it', async () => {
    const s = new Scenario({
      replicas: 3,
      volumeClaimTemplates: claims,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
    });
    await s.runUntil((x) => x.converged());
    expect([...s.cluster.claims.values()].every((c) => (c.metadata.ownerReferences ?? []).length === 0)).toBe(true);
    s.edit({ replicas: 1 });
    await s.runUntil((x) => x.converged());
    expect(claimNames(s)).toEqual(['data-web-0']);
  });

  it('Delete/Delete: condemned claims go with their pods, the rest with the App', async () => {
    const s = new Scenario({
      replicas: 3,
      podManagementPolicy: 'Parallel',
      volumeClaimTemplates: claims,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
    });
    await s.runUntil((x) => x.converged());
    s.edit({ replicas: 1 });
    await s.runUntil((x) => x.converged());
    expect(claimNames(s)).toEqual(['data-web-0']);
    s.cluster.deleteApp(NS, 'web');
    expect(claimNames(s)).toEqual([]);
  });

  it('whenScaled Retain: claims stay after a scale-down and are reused on scale-up', async () => {
    const s = new Scenario({ replicas: 3, volumeClaimTemplates: claims });
    await s.runUntil((x) => x.converged());
    const uid = s.cluster.claims.get(`${NS}/data-web-2`)!.metadata.uid;
    s.edit({ replicas: 1 });
    await s.runUntil((x) => x.converged());
    expect(claimNames(s)).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);
    s.edit({ replicas: 3 });
    await s.runUntil((x) => x.converged());
    expect(s.cluster.claims.get(`${NS}/data-web-2`)!.metadata.uid).toBe(uid);
  });

  it('whenDeleted Delete: the App owns the claims (set on existing claims too when the policy changes)', async () => {
    const s = new Scenario({ replicas: 2, volumeClaimTemplates: claims });
    await s.runUntil((x) => x.converged());
    s.edit({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } });
    await s.step();
    const appUid = s.app().metadata.uid;
    for (const c of s.cluster.claims.values()) expect(c.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'App', uid: appUid })]);
    s.cluster.deleteApp(NS, 'web');
    expect(claimNames(s)).toEqual([]);
  });

  it('finds claims of a migrated StatefulSet by the selector labels and applies the policy to them', async () => {
    const s = new Scenario({
      replicas: 1,
      volumeClaimTemplates: claims,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    });
    const old = await s.cluster.client().claims.create(NS, { metadata: { name: 'data-web-0', labels: { app: 'web' } }, spec: {} });
    await s.runUntil((x) => x.converged());
    const claim = s.cluster.claims.get(`${NS}/data-web-0`)!;
    expect(claim.metadata.uid).toBe(old.metadata.uid);
    expect(claim.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'App', uid: s.app().metadata.uid })]);
  });

  it('lists the claims only in reconciles whose plan needs them', async () => {
    const s = new Scenario({
      replicas: 3,
      volumeClaimTemplates: claims,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    });
    await s.runUntil((x) => x.converged());
    // Steady state: nothing to create, scale down or re-own, so no claim LIST.
    const before = s.claimReads;
    await s.reconcile();
    expect(s.claimReads).toBe(before);
    // A rolling update re-lists them for the spec change and for each pod it creates, not on every reconcile.
    const plansBefore = s.plans.length;
    s.edit({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'registry.example/web:v2' }] } } });
    await s.runUntil((x) => x.converged() && x.app().status?.currentRevision === x.app().status?.updateRevision);
    const reads = s.claimReads - before;
    expect(reads).toBeGreaterThanOrEqual(1 + 3);
    expect(reads).toBeLessThan(s.plans.length - plansBefore);
    // And the policy still holds on every claim.
    for (const c of s.cluster.claims.values())
      expect(c.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'App', uid: s.app().metadata.uid })]);
  });

  it('whenDeleted Retain: deleting the App leaves the claims', async () => {
    const s = new Scenario({ replicas: 2, volumeClaimTemplates: claims });
    await s.runUntil((x) => x.converged());
    s.cluster.deleteApp(NS, 'web');
    expect(claimNames(s)).toEqual(['data-web-0', 'data-web-1']);
  });
});
