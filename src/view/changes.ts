/**
 * What a watch event or list page changes in the view (pure): the field writes and deletes per App hash. The
 * writer (`writer.ts`) sends them to Redis before the event's job is enqueued.
 */
import { Label } from '../api/keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { appKey, podOwnerKey } from '../watcher/keys.ts';
import { encodeEntry, encodeTombstone } from './entry.ts';
import { Field } from './keys.ts';
import { projectApp, projectPod } from './project.ts';

/**
 * One App hash (by namespace and name) and what to do with it: `set` a field; `gone` sets a tombstone, after
 * which a hash whose App is gone and holds no live pod is removed whole (the writer does it in one script).
 */
export type Change = { op: 'set' | 'gone'; namespace: string; app: string; field: string; value: string };

export type ViewKind = 'app' | 'pod';

/** The changes `obj` (of `kind`) makes, seen in a list or in an ADDED or MODIFIED event under list `listId`. */
export function upsertChanges(kind: ViewKind, obj: KubeObject, listId: string, limitBytes?: number): Change[] {
  if (kind === 'app') {
    const key = appKey(obj);
    return key ? [{ op: 'set', namespace: key.namespace, app: key.name, field: Field.app, value: encodeEntry(listId, projectApp(obj), limitBytes) }] : [];
  }
  const name = obj.metadata?.name;
  if (!name) return [];
  const owner = podOwnerKey(obj);
  const changes: Change[] = owner
    ? [{ op: 'set', namespace: owner.namespace, app: owner.name, field: Field.pod(name), value: encodeEntry(listId, projectPod(obj), limitBytes) }]
    : [];
  return [...changes, ...leftLabelled(obj, owner?.name, listId)];
}

/**
 * A pod that carries App `label`'s label but maps to another App (or none: a controller of another kind took it)
 * leaves App `label`'s view: the watcher does not remember where a pod was, but ebb's pods carry their App's
 * label, so that is where a stale copy would be.
 */
function leftLabelled(pod: KubeObject, owner: string | undefined, listId: string): Change[] {
  const label = pod.metadata?.labels?.[Label.app];
  const namespace = pod.metadata?.namespace;
  const name = pod.metadata?.name;
  if (!label || !namespace || !name || label === owner) return [];
  return [{ op: 'gone', namespace, app: label, field: Field.pod(name), value: encodeTombstone(listId, pod) }];
}

/**
 * The changes a DELETED event of `obj` makes: a tombstone (an App's hash goes with its App's tombstone once its
 * pods are gone too; they go after it, the garbage collector deletes them).
 */
export function deleteChanges(kind: ViewKind, obj: KubeObject, listId: string): Change[] {
  if (kind === 'app') {
    const key = appKey(obj);
    return key ? [{ op: 'gone', namespace: key.namespace, app: key.name, field: Field.app, value: encodeTombstone(listId, obj) }] : [];
  }
  const name = obj.metadata?.name;
  const namespace = obj.metadata?.namespace;
  if (!name || !namespace) return [];
  const apps = new Set([podOwnerKey(obj)?.name, obj.metadata?.labels?.[Label.app]].filter((a): a is string => a !== undefined));
  return [...apps].map((app) => ({ op: 'gone', namespace, app, field: Field.pod(name), value: encodeTombstone(listId, obj) }));
}
