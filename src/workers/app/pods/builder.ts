/**
 * Builders of the objects an App creates per ordinal (upstream newStatefulSetPod / newVersionedStatefulSetPod
 * and getPersistentVolumeClaims): the pod with its identity, and the PVCs from volumeClaimTemplates.
 */
import type { App } from '../../../api/app.ts';
import { Label } from '../../../api/keys.ts';
import { withoutSpecifiedDelete } from '../../../api/specified-delete.ts';
import type { PersistentVolumeClaimTemplate, PodTemplateSpec } from '../../../api/pod-template.ts';
import type { Named, OwnerReference, PersistentVolumeClaim, Pod, PodSpec, Stored, Volume } from '../../../kube/types.ts';
import { appControllerRef } from '../model/owner-refs.ts';
import { identityLabels, podName } from './predicates.ts';

/** `<claim>-<app>-<ordinal>`: the PVC a pod's volume `<claim>` is bound to. */
export function claimName(claim: string, appName: string, ordinal: number): string {
  return `${claim}-${appName}-${ordinal}`;
}

/** The pod's volumes: the template's, with one PVC volume per claim template (replacing any of the same name). */
function volumesFor(app: Stored<App>, spec: PodSpec, ordinal: number): Volume[] | undefined {
  const claims = app.spec.volumeClaimTemplates ?? [];
  if (claims.length === 0) return spec.volumes;
  const names = new Set(claims.map((c) => c.metadata.name));
  const kept = (spec.volumes ?? []).filter((v) => !names.has(v.name));
  const pvcs = claims.map((c) => ({ name: c.metadata.name, persistentVolumeClaim: { claimName: claimName(c.metadata.name, app.metadata.name, ordinal) } }));
  return [...kept, ...pvcs];
}

/** The pod for `ordinal` from `template` (the template of revision `revisionName`). */
export function newPodForOrdinal(app: Stored<App>, template: PodTemplateSpec, revisionName: string, ordinal: number): Named<Pod> {
  const appName = app.metadata.name;
  const name = podName(appName, ordinal);
  const spec: PodSpec = structuredClone(template.spec);
  const volumes = volumesFor(app, spec, ordinal);
  if (volumes !== undefined) spec.volumes = volumes;
  spec.hostname = name;
  if (app.spec.serviceName) spec.subdomain = app.spec.serviceName;
  const meta = template.metadata ?? {};
  const finalizers = (meta as { finalizers?: string[] }).finalizers;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: app.metadata.namespace,
      labels: {
        ...withoutSpecifiedDelete(meta.labels ?? {}),
        ...identityLabels(appName, ordinal),
        [Label.revision]: revisionName,
        [Label.controllerRevisionHash]: revisionName,
      },
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(finalizers ? { finalizers: [...finalizers] } : {}),
      ownerReferences: [appControllerRef(app)],
    },
    spec,
  };
}

/** Labels of a PVC: the App's selector labels (as upstream), the claim template's, and the App label (how ebb lists them). */
function claimLabels(app: Stored<App>, claim: PersistentVolumeClaimTemplate): Record<string, string> {
  return { ...(app.spec.selector.matchLabels ?? {}), ...(claim.metadata.labels ?? {}), [Label.app]: app.metadata.name };
}

export function newPvcForOrdinal(
  app: Stored<App>,
  claim: PersistentVolumeClaimTemplate,
  ordinal: number,
  ownerReferences: OwnerReference[],
): Named<PersistentVolumeClaim> {
  const meta = claim.metadata;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(meta.name, app.metadata.name, ordinal),
      namespace: app.metadata.namespace,
      labels: claimLabels(app, claim),
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(ownerReferences.length > 0 ? { ownerReferences } : {}),
    },
    spec: structuredClone(claim.spec),
  };
}
