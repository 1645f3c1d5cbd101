/**
 * persistentVolumeClaimRetentionPolicy through owner references (upstream claimOwnerMatchesSetAndPod):
 * `whenDeleted: Delete` → the App owns the claim, so the garbage collector deletes it with the App;
 * `whenScaled: Delete` → a condemned pod (alone) owns its claims, so they go when the scale-down deletes the pod.
 * Either owner is the claim's controller, as the StatefulSet controller makes it.
 * Only references to this App and to the ordinal's own pod are managed; others are left alone.
 */
import type { App } from '../../../api/app.ts';
import { RetentionPolicy } from '../../../api/app-spec.ts';
import type { PersistentVolumeClaimTemplate } from '../../../api/pod-template.ts';
import type { Action } from '../model/actions.ts';
import type { OwnerReference, PersistentVolumeClaim, Pod, Stored } from '../../../kube/types.ts';
import { podControllerRef } from './owner.ts';
import { appControllerRef } from '../model/owner-refs.ts';
import { claimName, newPvcForOrdinal } from '../pods/builder.ts';
import { podName } from '../pods/predicates.ts';

function isManagedRef(app: Stored<App>, ordinal: number, ref: OwnerReference): boolean {
  if (ref.uid === app.metadata.uid) return true;
  return ref.kind === 'Pod' && ref.apiVersion === 'v1' && ref.name === podName(app.metadata.name, ordinal);
}

/**
 * The owner references the claim of `ordinal` should carry. `pod` is the ordinal's pod when it is condemned.
 * The owner the policy names is the claim's controller (controller and blockOwnerDeletion true); a reference
 * to it whose controller flag was cleared is replaced, so the flag comes back. A claim controlled by anything
 * else keeps that controller alone: this App's references are removed and none added.
 */
export function desiredClaimOwners(
  app: Stored<App>,
  existing: readonly OwnerReference[],
  ordinal: number,
  condemnedPod: Stored<Pod> | undefined,
): OwnerReference[] {
  const policy = app.spec.persistentVolumeClaimRetentionPolicy ?? {};
  const kept = existing.filter((r) => !isManagedRef(app, ordinal, r));
  if (kept.some((r) => r.controller === true)) return kept;
  // The garbage collector deletes a dependent only once all its owners are gone, so a condemned claim under
  // whenScaled: Delete is owned by its pod alone.
  const owner =
    policy.whenScaled === RetentionPolicy.delete && condemnedPod?.metadata.uid
      ? podControllerRef(condemnedPod)
      : policy.whenDeleted === RetentionPolicy.delete
        ? appControllerRef(app)
        : undefined;
  if (!owner) return kept;
  return [...kept, existing.find((r) => r.uid === owner.uid && r.controller === true) ?? owner];
}

const refKey = (r: OwnerReference): string => `${r.kind}/${r.uid}/${r.controller === true ? 'controller' : ''}`;

function sameRefs(a: readonly OwnerReference[], b: readonly OwnerReference[]): boolean {
  const ka = a.map(refKey).sort();
  const kb = b.map(refKey).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i]);
}

/** A setPvcOwners action for each existing claim of `ordinal` whose references differ from the policy's. */
export function retentionActions(
  app: Stored<App>,
  claims: ReadonlyMap<string, Stored<PersistentVolumeClaim>>,
  ordinal: number,
  condemnedPod: Stored<Pod> | undefined,
): Action[] {
  const actions: Action[] = [];
  for (const t of app.spec.volumeClaimTemplates ?? []) {
    const pvc = claims.get(claimName(t.metadata.name, app.metadata.name, ordinal));
    if (!pvc || pvc.metadata.deletionTimestamp) continue;
    const existing = pvc.metadata.ownerReferences ?? [];
    const desired = desiredClaimOwners(app, existing, ordinal, condemnedPod);
    if (!sameRefs(existing, desired)) {
      actions.push({ kind: 'setPvcOwners', name: pvc.metadata.name, resourceVersion: pvc.metadata.resourceVersion, ownerReferences: desired });
    }
  }
  return actions;
}

interface ClaimsOfOrdinal {
  /** Claims to create before the pod. */
  create: Action[];
  /** A claim of this ordinal is being deleted: the pod must wait until it is gone (upstream PodClaimIsStale). */
  terminating: boolean;
}

export function claimsToCreate(app: Stored<App>, claims: ReadonlyMap<string, Stored<PersistentVolumeClaim>>, ordinal: number): ClaimsOfOrdinal {
  const create: Action[] = [];
  let terminating = false;
  for (const t of app.spec.volumeClaimTemplates ?? ([] as PersistentVolumeClaimTemplate[])) {
    const pvc = claims.get(claimName(t.metadata.name, app.metadata.name, ordinal));
    if (pvc?.metadata.deletionTimestamp) terminating = true;
    else if (!pvc) create.push({ kind: 'createPvc', pvc: newPvcForOrdinal(app, t, ordinal, desiredClaimOwners(app, [], ordinal, undefined)), ordinal });
  }
  return { create, terminating };
}
