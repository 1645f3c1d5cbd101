/**
 * Pure decisions of the sandbox's dynamic provisioner: which PVCs need a PV, what that PV looks like, and
 * which released PVs to delete. Modelled on sig-storage-lib-external-provisioner (PV name `pvc-<claim uid>`,
 * annotation `pv.kubernetes.io/provisioned-by`, claimRef pre-bound so the persistentvolume-binder binds it).
 */

export const PROVISIONER = 'sandbox.ebb.dev/hostpath';
export const STORAGE_CLASS = 'standard';
export const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';

export interface Claim {
  metadata: { name: string; namespace: string; uid: string; deletionTimestamp?: string };
  spec: {
    storageClassName?: string;
    volumeName?: string;
    accessModes?: string[];
    volumeMode?: string;
    resources?: { requests?: Record<string, string> };
  };
  status?: { phase?: string };
}

export interface Volume {
  metadata: { name: string; annotations?: Record<string, string>; deletionTimestamp?: string };
  spec: { persistentVolumeReclaimPolicy?: string; hostPath?: { path: string }; claimRef?: { uid?: string } };
  status?: { phase?: string };
}

export function storageClass(): Record<string, unknown> {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: STORAGE_CLASS, annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
    provisioner: PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
    allowVolumeExpansion: true,
  };
}

export function volumeNameFor(claim: Claim): string {
  return `pvc-${claim.metadata.uid}`;
}

/** A claim of our class that has no volume yet. */
export function needsVolume(claim: Claim, classes: ReadonlySet<string>): boolean {
  const cls = claim.spec.storageClassName;
  return (
    cls !== undefined &&
    classes.has(cls) &&
    !claim.spec.volumeName &&
    (claim.status?.phase ?? 'Pending') === 'Pending' &&
    claim.metadata.deletionTimestamp === undefined
  );
}

/** The PV for a claim: capacity from its request, a hostPath under `volumesDir`, pre-bound to the claim. */
export function volumeFor(claim: Claim, volumesDir: string): Record<string, unknown> {
  const name = volumeNameFor(claim);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { [PROVISIONED_BY]: PROVISIONER } },
    spec: {
      capacity: { storage: claim.spec.resources?.requests?.storage ?? '1Gi' },
      accessModes: claim.spec.accessModes ?? ['ReadWriteOnce'],
      volumeMode: claim.spec.volumeMode ?? 'Filesystem',
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: claim.spec.storageClassName,
      hostPath: { path: `${volumesDir}/${name}`, type: 'DirectoryOrCreate' },
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid },
    },
  };
}

/** A volume this provisioner made whose claim is gone and whose reclaim policy is Delete. */
export function shouldDelete(pv: Volume): boolean {
  return (
    pv.metadata.annotations?.[PROVISIONED_BY] === PROVISIONER &&
    (pv.spec.persistentVolumeReclaimPolicy ?? 'Delete') === 'Delete' &&
    (pv.status?.phase === 'Released' || pv.status?.phase === 'Failed') &&
    pv.metadata.deletionTimestamp === undefined
  );
}
