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
import { core } from '../../../src/kube/paths.ts';
import { getOrdinal } from '../../../src/workers/app/pods/predicates.ts';
import { FIXED_SIZE_STORAGE_CLASS } from '../../../harness/sandbox/storage/pv-plan.ts';
import { rejection, sandbox } from '../support.ts';
import { claimsIn, createApp, eventsOf, getApp, patchApp, podsOf, revisionOf, settled, uniqueName, until, useController } from './harness.ts';

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

    const other = await rejection(
      replaceTemplates(ctl.ns, name, [{ ...claimTemplate('1Gi'), spec: { ...claimTemplate('1Gi').spec, accessModes: ['ReadWriteMany'] } }]),
    );
    expect(other.message).toContain('only spec.resources.requests.storage of a claim template may change');
    const otherClass = await rejection(replaceTemplates(ctl.ns, name, [claimTemplate('2Gi', 'standard-immediate')]));
    expect(otherClass.message).toContain('only spec.resources.requests.storage');
    const label = await rejection(replaceTemplates(ctl.ns, name, [{ ...claimTemplate('1Gi'), metadata: { name: 'data', labels: { a: 'b' } } }]));
    expect(label.message).toContain('only spec.resources.requests.storage');

    // As before volume growth: a claim template changed in another field than its storage is refused as immutable.
    const accessModesDropped = await rejection(
      replaceTemplates(ctl.ns, name, [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '2Gi' } } } }]),
    );
    expect(accessModesDropped.message).toContain('volumeClaimTemplates is immutable');

    const added = await rejection(replaceTemplates(ctl.ns, name, [claimTemplate('1Gi'), { ...claimTemplate('1Gi'), metadata: { name: 'logs' } }]));
    expect(added.message).toContain('templates cannot be added, removed, renamed or reordered');
    const renamed = await rejection(replaceTemplates(ctl.ns, name, [{ ...claimTemplate('1Gi'), metadata: { name: 'logs' } }]));
    expect(renamed.message).toContain('templates cannot be added, removed, renamed or reordered');
    const emptied = await rejection(replaceTemplates(ctl.ns, name, []));
    expect(emptied.message).toContain('templates cannot be added, removed');
    const removed = await rejection(sandbox().rest.patch(appRef(ctl.ns, name), [{ op: 'remove', path: '/spec/volumeClaimTemplates' }], PatchType.json));
    expect(removed.message).toContain('volumeClaimTemplates is immutable: it cannot be added or removed');

    // Same value in another unit is no shrink; a larger one is accepted.
    await replaceTemplates(ctl.ns, name, [claimTemplate('1024Mi')]);
    await replaceTemplates(ctl.ns, name, [claimTemplate('3Gi')]);
    const app = await getApp(ctl.ns, name);
    expect(app.spec.volumeClaimTemplates?.[0]?.spec['resources']).toEqual({ requests: { storage: '3Gi' } });
    expect(app.spec.volumeClaimUpdateStrategy).toBeUndefined();

    const none = uniqueName('adm-none');
    await createApp(ctl.ns, none, { replicas: 0 });
    const addedLater = await rejection(sandbox().rest.patch(appRef(ctl.ns, none), { spec: { volumeClaimTemplates: [claimTemplate('1Gi')] } }, PatchType.merge));
    expect(addedLater.message).toContain('volumeClaimTemplates is immutable: it cannot be added or removed');
  });
});

const grow = { volumeClaimUpdateStrategy: { type: 'OnPodRollingUpdate' as const } };

/** One look at the rollout: the App, then its pods, then its claims (so a pod seen updated was updated before the claims were read). */
interface Look {
  updateRevision: string | undefined;
  pods: { ordinal: number; revision: string | undefined; uid: string | undefined }[];
  claims: { ordinal: number; request: unknown; capacity: unknown }[];
}

async function look(ns: string, name: string): Promise<Look> {
  const app = await getApp(ns, name);
  const pods = (await podsOf(ns, name)).map((p) => ({ ordinal: getOrdinal(name, p.metadata.name), revision: revisionOf(p), uid: p.metadata.uid }));
  const claims = (await claimsOf(ns, name)).map((c) => ({
    ordinal: Number((c.metadata.name ?? '').split('-').pop()),
    request: requestOf(c),
    capacity: capacityOf(c),
  }));
  return { updateRevision: app.status?.updateRevision, pods, claims };
}

/** What the looks at a 1Gi → 2Gi rollout showed. */
interface Seen {
  /** Ordinals in the order their claims were seen asking for 2Gi. */
  requestedOrder: number[];
  violations: string[];
  /** A claim was seen asking for 2Gi, still reporting 1Gi, with its pod not updated yet. */
  podWaited: boolean;
}

/** Records what one claim and its pod show into `seen`. */
function recordClaim(c: Look['claims'][number], l: Look, revisions: { old: string | undefined; grown: string | undefined }, seen: Seen): void {
  if (c.request === '2Gi' && !seen.requestedOrder.includes(c.ordinal)) seen.requestedOrder.push(c.ordinal);
  const revision = l.pods.find((p) => p.ordinal === c.ordinal)?.revision;
  // The invariant: a pod at the grown revision has a claim that reports the grown capacity.
  if (revisions.grown !== undefined && revision === revisions.grown && c.capacity !== '2Gi')
    seen.violations.push(`pod ${c.ordinal} updated while its claim reports ${String(c.capacity)}`);
  if (c.request === '2Gi' && c.capacity === '1Gi' && revision === revisions.old) seen.podWaited = true;
}

/** Records one look into `seen`; true once every claim reports 2Gi and every pod is at the grown revision. */
function record(l: Look, oldRevision: string | undefined, seen: Seen): boolean {
  const grown = l.updateRevision !== undefined && l.updateRevision !== oldRevision ? l.updateRevision : undefined;
  for (const c of l.claims) recordClaim(c, l, { old: oldRevision, grown }, seen);
  // Pod by pod (maxUnavailable 1): at most one claim asks for more than it has.
  const resizing = l.claims.filter((c) => c.request === '2Gi' && c.capacity !== '2Gi').map((c) => c.ordinal);
  if (resizing.length > 1) seen.violations.push(`claims of pods ${resizing.join(', ')} resizing at once`);
  return grown !== undefined && l.pods.length === 3 && l.pods.every((p) => p.revision === grown) && l.claims.every((c) => c.capacity === '2Gi');
}

describe('growing volumes with OnPodRollingUpdate', () => {
  it('expands each pod’s claim pod by pod, highest ordinal first; each pod is updated only once its claim reports the capacity', async () => {
    const name = uniqueName('grow');
    await createApp(ctl.ns, name, { ...grow, volumeClaimTemplates: [claimTemplate('1Gi')] });
    const before = await settled(ctl.ns, name);
    const uids = before.pods.map((p) => p.metadata.uid);
    const oldRevision = before.app.status?.updateRevision;

    await replaceTemplates(ctl.ns, name, [claimTemplate('2Gi')]);
    const seen: Seen = { requestedOrder: [], violations: [], podWaited: false };
    await waitFor(
      async () => {
        const l = await look(ctl.ns, name);
        return record(l, oldRevision, seen) ? l : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'every claim grown and every pod at the new revision' },
    );
    const { requestedOrder, violations, podWaited: sawPodWaiting } = seen;
    expect(violations).toEqual([]);
    expect(requestedOrder).toEqual([2, 1, 0]);
    expect(sawPodWaiting).toBe(true);
    // The pod template did not change: pods were relabelled, not restarted.
    const after = await settled(ctl.ns, name);
    expect(after.pods.map((p) => p.metadata.uid)).toEqual(uids);
    const volumes = await Promise.all(
      (await claimsOf(ctl.ns, name)).map((c) =>
        sandbox().rest.get<{ spec: { capacity: { storage: string } } }>(core('persistentvolumes', undefined, String(c.spec?.['volumeName']))),
      ),
    );
    expect(volumes.map((v) => v.spec.capacity.storage)).toEqual(['2Gi', '2Gi', '2Gi']);
    const expanding = await eventsOf(ctl.ns, name, 'ExpandingClaim');
    expect(expanding.map((e) => e.note).sort()).toEqual(
      [2, 1, 0].map((o) => `expand Claim data-${name}-${o} from 1Gi to 2Gi before updating Pod ${name}-${o} in App ${name}`).sort(),
    );
  });

  it('a StorageClass without allowVolumeExpansion: the claim is not touched, the pod is not updated, and the App says why', async () => {
    const name = uniqueName('fixed');
    await createApp(ctl.ns, name, { ...grow, replicas: 1, volumeClaimTemplates: [claimTemplate('1Gi', FIXED_SIZE_STORAGE_CLASS)] });
    const before = await settled(ctl.ns, name);
    const oldRevision = before.app.status?.updateRevision;
    await replaceTemplates(ctl.ns, name, [claimTemplate('2Gi', FIXED_SIZE_STORAGE_CLASS)]);
    const s = await until(
      ctl.ns,
      name,
      (x) => x.app.status?.conditions?.some((c) => c.type === ConditionType.volumeExpansionRefused && c.status === 'True') === true,
      { what: 'VolumeExpansionRefused' },
    );
    const condition = s.app.status?.conditions?.find((c) => c.type === ConditionType.volumeExpansionRefused);
    expect(condition?.message).toContain(`claim data-${name}-0 cannot grow to 2Gi`);
    expect(condition?.message).toMatch(/storageclass that provisions the pvc must support resize/i);
    const refusedEvents = await waitFor(
      async () => {
        const events = await eventsOf(ctl.ns, name, 'ClaimExpansionRefused');
        return events.length > 0 ? events : undefined;
      },
      { timeoutMs: 10_000, what: 'ClaimExpansionRefused Event' },
    );
    expect(refusedEvents[0]?.type).toBe('Warning');
    // A few reconciles later: one Event for the one refusal, the claim as it was, the pod at the old revision.
    await new Promise((r) => setTimeout(r, 3000));
    expect(await eventsOf(ctl.ns, name, 'ClaimExpansionRefused')).toHaveLength(1);
    const [claim] = await claimsOf(ctl.ns, name);
    expect(claim && requestOf(claim)).toBe('1Gi');
    expect(claim && capacityOf(claim)).toBe('1Gi');
    const now = await until(ctl.ns, name, () => true);
    expect(now.pods.map(revisionOf)).toEqual([oldRevision]);
    expect(now.app.status?.updatedReplicas).toBe(0);
  });
});

describe('OnDelete (the default)', () => {
  it('a larger storage request rolls nothing and leaves existing claims alone; claims created later get it', async () => {
    const name = uniqueName('ondel');
    await createApp(ctl.ns, name, { replicas: 2, volumeClaimTemplates: [claimTemplate('1Gi')] });
    const before = await settled(ctl.ns, name);
    await replaceTemplates(ctl.ns, name, [claimTemplate('2Gi')]);
    const after = await until(ctl.ns, name, (s) => s.app.status?.observedGeneration === s.app.metadata.generation, { what: 'the change observed' });
    expect(after.app.status?.updateRevision).toBe(before.app.status?.updateRevision);
    await patchApp(ctl.ns, name, { replicas: 3 });
    const scaled = await settled(ctl.ns, name);
    expect(scaled.pods.map((p) => p.metadata.uid).slice(0, 2)).toEqual(before.pods.map((p) => p.metadata.uid));
    const claims = await claimsOf(ctl.ns, name);
    expect(claims.map(requestOf)).toEqual(['1Gi', '1Gi', '2Gi']);
    expect(claims.map(capacityOf)).toEqual(['1Gi', '1Gi', '2Gi']);
    expect(await eventsOf(ctl.ns, name, 'ExpandingClaim')).toEqual([]);
  });
});
