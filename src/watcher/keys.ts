import { API_VERSION, APP_KIND } from '../api/group.ts';
import { Label } from '../api/keys.ts';
import type { ObjectKey } from '../queue/names.ts';

/** Just enough of an object's metadata to map it to a queue key; the watcher keeps nothing else. */
export interface ObjectMeta {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: { apiVersion?: string; kind?: string; name?: string; uid?: string; controller?: boolean }[];
  };
}

export function appKey(obj: ObjectMeta): ObjectKey | undefined {
  const { name, namespace } = obj.metadata ?? {};
  return name && namespace ? { kind: 'App', namespace, name } : undefined;
}

export function imageListKey(obj: ObjectMeta): ObjectKey | undefined {
  const name = obj.metadata?.name;
  return name ? { kind: 'ImageList', namespace: '', name } : undefined;
}

/**
 * A Pod maps to the App that controls it: the controller ownerReference when it names an App of our group,
 * otherwise the `apps.ebb.dev/app` label (an orphan that the App may adopt or release). Pods that are
 * neither belong to nobody.
 */
export function podOwnerKey(pod: ObjectMeta): ObjectKey | undefined {
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
