import { API_VERSION, APP_KIND } from '../api/group.ts';
import { Label } from '../api/keys.ts';
import { parsePrewarmFieldManager } from '../api/prewarm-keys.ts';
import { parsePullJobFieldManager } from '../api/pull-job-keys.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ObjectKey } from '../queue/names.ts';

export function appKey(obj: KubeObject): ObjectKey | undefined {
  const { name, namespace } = obj.metadata ?? {};
  return name && namespace ? { kind: 'App', namespace, name } : undefined;
}

export function imagePullJobKey(obj: KubeObject): ObjectKey | undefined {
  const { name, namespace } = obj.metadata ?? {};
  return name && namespace ? { kind: 'ImagePullJob', namespace, name } : undefined;
}

export function imageListKey(obj: KubeObject): ObjectKey | undefined {
  const name = obj.metadata?.name;
  return name ? { kind: 'ImageList', namespace: '', name } : undefined;
}

/**
 * The Apps and ImagePullJobs an ImageList concerns: those whose field manager (`ebb-prewarm/<namespace>/<name>`,
 * `ebb-pulljob/<namespace>/<name>`) owns part of it, within the watched namespaces (all when empty). So a
 * daemon's status report reaches the Apps and jobs that wait on it, and the list after a (re)start reaches the
 * entries of Apps and jobs deleted meanwhile.
 */
export function entryOwnerKeys(obj: KubeObject, namespaces: readonly string[]): ObjectKey[] {
  const keys = new Map<string, ObjectKey>();
  for (const entry of obj.metadata?.managedFields ?? []) {
    if (!entry.manager) continue;
    const app = parsePrewarmFieldManager(entry.manager);
    const job = app ? undefined : parsePullJobFieldManager(entry.manager);
    const owner = app ?? job;
    if (!owner || (namespaces.length > 0 && !namespaces.includes(owner.namespace))) continue;
    const kind = app ? 'App' : 'ImagePullJob';
    keys.set(`${kind} ${owner.namespace}/${owner.name}`, { kind, ...owner });
  }
  return [...keys.values()];
}

/**
 * A Pod maps to the App that controls it: the controller ownerReference when it names an App of our group,
 * otherwise the `apps.ebb.dev/app` label (an orphan that the App may adopt or release). Pods that are
 * neither belong to nobody.
 */
export function podOwnerKey(pod: KubeObject): ObjectKey | undefined {
  const namespace = pod.metadata?.namespace;
  if (!namespace) return undefined;
  const owner = pod.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (owner) {
    const ours = owner.kind === APP_KIND && owner.apiVersion?.split('/')[0] === API_VERSION.split('/')[0];
    return ours && owner.name ? { kind: 'App', namespace, name: owner.name } : undefined;
  }
  const label = pod.metadata?.labels?.[Label.app];
  return label ? { kind: 'App', namespace, name: label } : undefined;
}
