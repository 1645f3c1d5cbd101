/**
 * Pure decisions of the sandbox's dynamic provisioner: which PVCs need a PV, what that PV looks like, and
 * which released PVs to delete. Modelled on sig-storage-lib-external-provisioner (PV name `pvc-<claim uid>`,
 * annotation `pv.kubernetes.io/provisioned-by`, claimRef pre-bound so the persistentvolume-binder binds it).
 *
 * Two classes, as clusters have them: the default `standard` binds `WaitForFirstConsumer` (the scheduler
 * picks the pod's node, writes it into the claim's `volume.kubernetes.io/selected-node` annotation and waits
 * in PreBind; the provisioner then makes a PV pinned to that node), and `standard-immediate` provisions as
 * soon as a claim exists, for tests that want a bound claim without a pod.
 */

export const PROVISIONER = 'sandbox.ebb.dev/hostpath';
export const STORAGE_CLASS = 'standard';
export const IMMEDIATE_STORAGE_CLASS = 'standard-immediate';
/** Like `standard` but without allowVolumeExpansion: the apiserver refuses to grow its claims. */
export const FIXED_SIZE_STORAGE_CLASS = 'standard-fixed-size';
export const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
/** Set by kube-scheduler on a claim of a WaitForFirstConsumer class once it has picked the pod's node. */
export const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';
/** The node label a node-local volume's affinity matches (the kubelet sets it to the node name). */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

export type BindingMode = 'Immediate' | 'WaitForFirstConsumer';

export interface Claim {
  metadata: { name: string; namespace: string; uid: string; deletionTimestamp?: string; annotations?: Record<string, string> };
  spec: {
    storageClassName?: string;
    volumeName?: string;
    accessModes?: string[];
    volumeMode?: string;
    resources?: { requests?: Record<string, string> };
  };
  status?: { phase?: string; capacity?: Record<string, string> };
}

export interface Volume {
  metadata: { name: string; annotations?: Record<string, string>; deletionTimestamp?: string };
  spec: { persistentVolumeReclaimPolicy?: string; hostPath?: { path: string }; claimRef?: { uid?: string } };
  status?: { phase?: string };
}

function storageClass(name: string, mode: BindingMode, isDefault: boolean, expandable = true): Record<string, unknown> {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, ...(isDefault ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } } : {}) },
    provisioner: PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: mode,
    allowVolumeExpansion: expandable,
  };
}

/** The classes the sandbox installs: the default binds on the first consumer, the other at once. */
export function storageClasses(): Record<string, unknown>[] {
  return [storageClass(STORAGE_CLASS, 'WaitForFirstConsumer', true), storageClass(IMMEDIATE_STORAGE_CLASS, 'Immediate', false)];
}

/** A class whose claims cannot grow (no allowVolumeExpansion), for tests of volume growth refused. */
export function fixedSizeStorageClass(): Record<string, unknown> {
  return storageClass(FIXED_SIZE_STORAGE_CLASS, 'WaitForFirstConsumer', false, false);
}

export function volumeNameFor(claim: Claim): string {
  return `pvc-${claim.metadata.uid}`;
}

/**
 * A claim of one of our classes that has no volume yet and may be provisioned now: at once for an
 * Immediate class, only once the scheduler has selected a node for a WaitForFirstConsumer one.
 */
export function needsVolume(claim: Claim, classes: ReadonlyMap<string, BindingMode>): boolean {
  const cls = claim.spec.storageClassName;
  const mode = cls === undefined ? undefined : classes.get(cls);
  return (
    mode !== undefined &&
    (mode === 'Immediate' || selectedNode(claim) !== undefined) &&
    !claim.spec.volumeName &&
    (claim.status?.phase ?? 'Pending') === 'Pending' &&
    claim.metadata.deletionTimestamp === undefined
  );
}

export function selectedNode(claim: Claim): string | undefined {
  return claim.metadata.annotations?.[SELECTED_NODE_ANNOTATION] || undefined;
}

/**
 * The PV for a claim: capacity from its request, a hostPath under `volumesDir`, pre-bound to the claim and,
 * when the scheduler selected a node, pinned to it by node affinity (a local volume exists on one node only).
 */
export function volumeFor(claim: Claim, volumesDir: string): Record<string, unknown> {
  const name = volumeNameFor(claim);
  const node = selectedNode(claim);
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
      ...(node === undefined
        ? {}
        : { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [node] }] }] } } }),
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
