/**
 * Growing volumes on the sandbox (real apiserver and its claim-resize admission, the sandbox provisioner acting
 * as the volume resizer, the real watcher and worker): what admission lets change in volumeClaimTemplates, a
 * larger storage request rolled out pod by pod with OnPodRollingUpdate, a StorageClass that cannot expand, and
 * OnDelete leaving existing claims alone.
 */
import { describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { ConditionType } from '../../../src/api/keys.ts';
import { waitFor } from '../../../src/common/wait.ts';
import type { PersistentVolumeClaim } from '../../../src/kube/types.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { getOrdinal } from '../../../src/workers/app/pod-predicates.ts';
import { FIXED_SIZE_STORAGE_CLASS } from '../../../harness/sandbox/storage/pv-plan.ts';
import { rejection, sandbox } from '../support.ts';
import { claimsIn, createApp, eventsOf, getApp, patchApp, revisionOf, settled, uniqueName, until, useController } from './harness.ts';

const ctl = useController('app-grow');

type Claim = { metadata: { name: string }; spec: { accessModes: string[]; storageClassName?: string; resources: { requests: { storage: string } } } };

const claimTemplate = (storage: string, storageClassName?: string): Claim => ({
  metadata: { name: 'data' },
  spec: { accessModes: ['ReadWriteOnce'], ...(storageClassName ? { storageClassName } : {}), resources: { requests: { storage } } },
});

const replaceTemplates = (ns: string, name: string, templates: unknown[]) =>
  sandbox().rest.patch(appRef(ns, name), [{ op: 'replace', path: '/spec/volumeClaimTemplates', value: templates }], PatchType.json);

async function claimsOf(ns: string, app: string): Promise<PersistentVolumeClaim[]> {
  return (await claimsIn(ns))
    .filter((c) => c.metadata.name?.startsWith(`data-${app}-`))
    .sort((a, b) => getOrdinal(app, (a.metadata.name ?? '').slice('data-'.length)) - getOrdinal(app, (b.metadata.name ?? '').slice('data-'.length)));
}

const requestOf = (c: PersistentVolumeClaim): unknown => (c.spec?.['resources'] as { requests?: Record<string, string> } | undefined)?.requests?.['storage'];
const capacityOf = (c: PersistentVolumeClaim): unknown => (c.status?.['capacity'] as Record<string, string> | undefined)?.['storage'];

describe('volumeClaimTemplates at admission', () => {
  it('refuses shrinking, other changes, and adding or removing templates, each with a message; accepts growing', async () => {
    const name = uniqueName('adm');
    await createApp(ctl.ns, name, { replicas: 0, volumeClaimTemplates: [claimTemplate('1Gi')] });

    const shrink = await rejection(replaceTemplates(ctl.ns, name, [claimTemplate('512Mi')]));
    expect(shrink.code).toBe('Invalid');
    expect(shrink.message).toContain('cannot shrink');

    const other = await rejection(replaceTemplates(ctl.ns, name, [{ ...claimTemplate('1Gi'), spec: { ...claimTemplate('1Gi').spec, accessModes: ['ReadWriteMany'] } }]));
    expect(other.message).toContain('only spec.resources.requests.storage of a volumeClaimTemplate may change');
    const otherClass = await rejection(replaceTemplates(ctl.ns, name, [claimTemplate('2Gi', 'standard-immediate')]));
    expect(otherClass.message).toContain('only spec.resources.requests.storage');
    const label = await rejection(replaceTemplates(ctl.ns, name, [{ ...claimTemplate('1Gi'), metadata: { name: 'data', labels: { a: 'b' } } }]));
    expect(label.message).toContain('only spec.resources.requests.storage');

    const added = await rejection(replaceTemplates(ctl.ns, name, [claimTemplate('1Gi'), { ...claimTemplate('1Gi'), metadata: { name: 'logs' } }]));
    expect(added.message).toContain('cannot be added, removed, renamed or reordered');
    const renamed = await rejection(replaceTemplates(ctl.ns, name, [{ ...claimTemplate('1Gi'), metadata: { name: 'logs' } }]));
    expect(renamed.message).toContain('cannot be added, removed, renamed or reordered');
    const emptied = await rejection(replaceTemplates(ctl.ns, name, []));
    expect(emptied.message).toContain('cannot be added, removed');
    const removed = await rejection(sandbox().rest.patch(appRef(ctl.ns, name), [{ op: 'remove', path: '/spec/volumeClaimTemplates' }], PatchType.json));
    expect(removed.message).toContain('volumeClaimTemplates cannot be added or removed');

    // Same value in another unit is no shrink; a larger one is accepted.
    await replaceTemplates(ctl.ns, name, [claimTemplate('1024Mi')]);
    await replaceTemplates(ctl.ns, name, [claimTemplate('3Gi')]);
    const app = await getApp(ctl.ns, name);
    expect(app.spec.volumeClaimTemplates?.[0]?.spec['resources']).toEqual({ requests: { storage: '3Gi' } });
    expect(app.spec.volumeClaimUpdateStrategy).toBeUndefined();

    const none = uniqueName('adm-none');
    await createApp(ctl.ns, none, { replicas: 0 });
    const addedLater = await rejection(sandbox().rest.patch(appRef(ctl.ns, none), { spec: { volumeClaimTemplates: [claimTemplate('1Gi')] } }, PatchType.merge));
    expect(addedLater.message).toContain('volumeClaimTemplates cannot be added or removed');
  });
});
