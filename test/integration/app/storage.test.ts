/**
 * Claims from volumeClaimTemplates on the sandbox (simulated provisioner, real PV binder and garbage
 * collector): created before the pods, and the retention policy honoured both ways.
 */
import { describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { sandbox } from '../support.ts';
import { claimsIn, createApp, patchApp, settled, uniqueName, useController } from './harness.ts';

const ctl = useController('app-pvc');
const claims = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];

async function claimNames(ns: string, app: string): Promise<string[]> {
  return (await claimsIn(ns))
    .filter((c) => !c.metadata.deletionTimestamp && c.metadata.labels?.['apps.ebb.dev/app'] === app)
    .map((c) => c.metadata.name ?? '')
    .sort();
}

const eventually = <T>(check: () => Promise<T | undefined>, what: string): Promise<T> => waitFor(check, { timeoutMs: 60_000, intervalMs: 200, what });

describe('volume claims', () => {
  it('Retain/Retain: claims are created, bound, mounted, and outlive scale-down and App deletion', async () => {
    const name = uniqueName('keep');
    await createApp(ctl.ns, name, { replicas: 2, podManagementPolicy: 'Parallel', volumeClaimTemplates: claims });
    const s = await settled(ctl.ns, name);
    expect(await claimNames(ctl.ns, name)).toEqual([`data-${name}-0`, `data-${name}-1`]);
    expect(s.pods[1]?.spec?.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: `data-${name}-1` } });
    const bound = (await claimsIn(ctl.ns)).filter((c) => c.metadata.name?.includes(name));
    expect(bound.every((c) => c.status?.phase === 'Bound')).toBe(true);
    expect(bound.every((c) => (c.metadata.ownerReferences ?? []).length === 0)).toBe(true);
    await patchApp(ctl.ns, name, { replicas: 1 });
    await settled(ctl.ns, name);
    expect(await claimNames(ctl.ns, name)).toEqual([`data-${name}-0`, `data-${name}-1`]);
    await sandbox().rest.delete(appRef(ctl.ns, name), { propagationPolicy: 'Background' });
    await new Promise((r) => setTimeout(r, 2000));
    expect(await claimNames(ctl.ns, name)).toEqual([`data-${name}-0`, `data-${name}-1`]);
  });

  it('Delete/Delete: a scale-down deletes the condemned claims; deleting the App deletes the rest', async () => {
    const name = uniqueName('drop');
    const app = await createApp(ctl.ns, name, {
      replicas: 3,
      podManagementPolicy: 'Parallel',
      volumeClaimTemplates: claims,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
    });
    await settled(ctl.ns, name);
    const owned = (await claimsIn(ctl.ns)).filter((c) => c.metadata.name?.includes(name));
    expect(owned.every((c) => c.metadata.ownerReferences?.some((r) => r.kind === 'App' && r.uid === app.metadata.uid))).toBe(true);
    await patchApp(ctl.ns, name, { replicas: 1 });
    await settled(ctl.ns, name);
    await eventually(async () => ((await claimNames(ctl.ns, name)).join() === `data-${name}-0` ? true : undefined), 'condemned claims deleted');
    await sandbox().rest.delete(appRef(ctl.ns, name), { propagationPolicy: 'Background' });
    await eventually(async () => ((await claimNames(ctl.ns, name)).length === 0 ? true : undefined), 'claims deleted with the App');
  });
});
