/**
 * Differential tests against the upstream StatefulSet controller (kube-controller-manager's, in the sandbox):
 * the same scenario on an apps/v1 StatefulSet and on an App, run side by side, and their outcomes compared.
 * Owner references: a pod that leaves the selector is released and its ordinal created anew, claims under
 * `whenDeleted: Delete` are controlled by their owner (a cleared controller flag comes back), and a matching
 * orphan is adopted.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core, type ResourceRef } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import type { OwnerReference, PersistentVolumeClaim, Pod } from '../../../src/kube/types.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { sandbox } from '../support.ts';
import { claimsIn, createApp, getApp, patchApp, template, uniqueName, useController } from './harness.ts';

const ctl = useController('parity');
const KINDS = ['StatefulSet', 'App'] as const;
type Kind = (typeof KINDS)[number];

const statefulSets = (ns: string, name?: string): ResourceRef => ({ group: 'apps', version: 'v1', resource: 'statefulsets', namespace: ns, name });
const claims = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];

interface Workload {
  kind: Kind;
  name: string;
  uid: string;
}

interface WorkloadStatus {
  replicas?: number;
}

/** Creates a StatefulSet or an App named `<kind>-<random>` with the same spec (the App API is a superset). */
async function create(kind: Kind, spec: Partial<AppSpec>, name = uniqueName(kind === 'App' ? 'app' : 'sts')): Promise<Workload> {
  if (kind === 'App') return { kind, name, uid: (await createApp(ctl.ns, name, spec)).metadata.uid ?? '' };
  const body = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: ctl.ns },
    spec: { replicas: 3, selector: { matchLabels: { app: name } }, serviceName: name, template: template(name, 'v1'), ...spec },
  };
  const created = await sandbox().rest.create<{ metadata: { uid?: string } }>(statefulSets(ctl.ns), body);
  return { kind, name, uid: created.metadata.uid ?? '' };
}

async function patchSpec(w: Workload, spec: Record<string, unknown>): Promise<void> {
  if (w.kind === 'App') await patchApp(ctl.ns, w.name, spec);
  else await sandbox().rest.patch(statefulSets(ctl.ns, w.name), { spec }, PatchType.merge);
}

async function statusOf(w: Workload): Promise<WorkloadStatus> {
  if (w.kind === 'App') return (await getApp(ctl.ns, w.name)).status ?? {};
  return (await sandbox().rest.get<{ status?: WorkloadStatus }>(statefulSets(ctl.ns, w.name))).status ?? {};
}

async function getPod(name: string): Promise<Pod | undefined> {
  try {
    return await sandbox().rest.get<Pod>(core('pods', ctl.ns, name));
  } catch (err) {
    if (isKubeError(err, 'NotFound')) return undefined;
    throw err;
  }
}

const controllerOf = (refs: readonly OwnerReference[] | undefined): string | undefined => refs?.find((r) => r.controller === true)?.uid;

const eventually = <T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> =>
  waitFor(check, { timeoutMs, intervalMs: 200, what });

/** Pod `<name>-<ordinal>` running, ready and controlled by `w` (other than `notUid`, when given). */
function readyPodOf(w: Workload, ordinal: number, notUid?: string): Promise<Pod> {
  return eventually(async () => {
    const pod = await getPod(`${w.name}-${ordinal}`);
    const ok = pod && !pod.metadata.deletionTimestamp && isRunningAndReady(pod) && controllerOf(pod.metadata.ownerReferences) === w.uid;
    return ok && pod.metadata.uid !== notUid ? pod : undefined;
  }, `${w.kind} ${w.name}: pod ${ordinal} ready`);
}

interface ReleaseOutcome {
  /** The released pod's controller (none) and how many owner references it kept. */
  releasedController: string | undefined;
  releasedOwners: number;
  replicasWhileReleased: number | undefined;
  replacedSameOrdinal: boolean;
}

async function relabelOutOfSelector(kind: Kind): Promise<ReleaseOutcome> {
  const w = await create(kind, { replicas: 2 });
  await readyPodOf(w, 0);
  const before = await readyPodOf(w, 1);
  const podName = `${w.name}-1`;
  await sandbox().rest.patch(core('pods', ctl.ns, podName), { metadata: { labels: { app: `${w.name}-elsewhere` } } }, PatchType.merge);
  const released = await eventually(async () => {
    const pod = await getPod(podName);
    return pod !== undefined && pod.metadata.uid === before.metadata.uid && !pod.metadata.ownerReferences?.some((r) => r.uid === w.uid) ? pod : undefined;
  }, `${kind} ${w.name}: ${podName} released`);
  // The released pod keeps the name: the workload counts only its other pod until the name is free.
  const replicasWhileReleased = await eventually(async () => {
    const n = (await statusOf(w)).replicas;
    return n === 1 ? n : undefined;
  }, `${kind} ${w.name}: status counts the pods it controls`);
  await sandbox().rest.delete(core('pods', ctl.ns, podName));
  const replacement = await readyPodOf(w, 1, released.metadata.uid);
  return {
    releasedController: controllerOf(released.metadata.ownerReferences),
    releasedOwners: released.metadata.ownerReferences?.length ?? 0,
    replicasWhileReleased,
    replacedSameOrdinal: replacement.metadata.name === podName,
  };
}

interface ClaimOwnership {
  /** controller/blockOwnerDeletion of the workload's reference on each claim, by ordinal. */
  flags: { controller: boolean | undefined; blockOwnerDeletion: boolean | undefined }[];
  restored: { controller: boolean | undefined; blockOwnerDeletion: boolean | undefined };
}

const flagsOf = (claim: PersistentVolumeClaim | undefined, uid: string) => {
  const ref = claim?.metadata.ownerReferences?.find((r) => r.uid === uid);
  return { controller: ref?.controller, blockOwnerDeletion: ref?.blockOwnerDeletion };
};

async function claimOwnership(kind: Kind): Promise<ClaimOwnership> {
  const w = await create(kind, {
    replicas: 2,
    podManagementPolicy: 'Parallel',
    volumeClaimTemplates: claims,
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
  });
  await readyPodOf(w, 0);
  await readyPodOf(w, 1);
  const claimOf = async (ordinal: number) => (await claimsIn(ctl.ns)).find((c) => c.metadata.name === `data-${w.name}-${ordinal}`);
  const owned = await eventually(async () => {
    const found = await Promise.all([claimOf(0), claimOf(1)]);
    return found.every((c) => c?.metadata.ownerReferences?.some((r) => r.uid === w.uid)) ? found : undefined;
  }, `${kind} ${w.name}: claims owned`);
  const flags = owned.map((c) => flagsOf(c, w.uid));
  // Someone clears the controller flag of claim 0's reference; a spec change has both controllers look again.
  const ref = owned[0]?.metadata.ownerReferences?.find((r) => r.uid === w.uid);
  const cleared = { apiVersion: ref?.apiVersion, kind: ref?.kind, name: ref?.name, uid: ref?.uid, blockOwnerDeletion: true };
  const patched = await sandbox().rest.patch<PersistentVolumeClaim>(
    core('persistentvolumeclaims', ctl.ns, `data-${w.name}-0`),
    { metadata: { ownerReferences: [cleared] } },
    PatchType.merge,
  );
  expect(flagsOf(patched, w.uid).controller).toBeUndefined();
  await patchSpec(w, { revisionHistoryLimit: 5 });
  const restored = await eventually(async () => {
    const f = flagsOf(await claimOf(0), w.uid);
    return f.controller === true ? f : undefined;
  }, `${kind} ${w.name}: controller flag restored`);
  return { flags, restored };
}

async function adoptOrphan(kind: Kind): Promise<{ adopted: boolean }> {
  const name = uniqueName(kind === 'App' ? 'app' : 'sts');
  const orphan = await sandbox().rest.create<Pod>(core('pods', ctl.ns), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${name}-0`, namespace: ctl.ns, labels: { app: name } },
    spec: template(name, 'v1').spec,
  });
  // OnDelete: the adopted pod (which has no revision) is kept as it is, not replaced by a rolling update.
  const w = await create(kind, { replicas: 1, updateStrategy: { type: 'OnDelete' } }, name);
  await eventually(async () => {
    const pod = await getPod(`${name}-0`);
    return pod !== undefined && pod.metadata.uid === orphan.metadata.uid && controllerOf(pod.metadata.ownerReferences) === w.uid ? true : undefined;
  }, `${kind} ${name}: orphan adopted`);
  return { adopted: true };
}

describe('upstream parity: owner references', () => {
  it('a pod relabelled out of the selector is released by both and its ordinal created anew once it is gone', async () => {
    const [sts, app] = await Promise.all(KINDS.map(relabelOutOfSelector));
    expect(app).toEqual(sts);
    expect(app).toEqual({ releasedController: undefined, releasedOwners: 0, replicasWhileReleased: 1, replacedSameOrdinal: true });
  });

  it('whenDeleted: Delete: the claims are controlled by their workload on both, and a cleared controller flag comes back', async () => {
    const [sts, app] = await Promise.all(KINDS.map(claimOwnership));
    expect(app).toEqual(sts);
    const controlled = { controller: true, blockOwnerDeletion: true };
    expect(app).toEqual({ flags: [controlled, controlled], restored: controlled });
  });

  it('an orphan pod that matches the selector is adopted by both', async () => {
    const [sts, app] = await Promise.all(KINDS.map(adoptOrphan));
    expect(app).toEqual(sts);
    expect(app).toEqual({ adopted: true });
  });
});
