/**
 * The pod source's filter: a pod watch event updates the pod's digest and, by its verdict (`podEventVerdict`),
 * is dropped, held briefly (`PodHolds`) or enqueued now. An event enqueued now releases what was held for the
 * same pod: its App is enqueued anyway.
 */
import type { WatchEvent } from '../kube/watch.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ObjectKey } from '../queue/names.ts';
import { podEventVerdict } from './pod-digest.ts';
import type { PodHolds } from './pod-holds.ts';

/** An object's own identity in a digest map (namespace/name). */
export function objectId(obj: KubeObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

export interface PodFilterSink {
  /** Whether a tracked source has listed and does not hold a key (`KnownKeys.lacks`). */
  known: { lacks(source: string, key: ObjectKey): boolean };
  holds: PodHolds;
  onIgnored(resource: string, reason: string): void;
}

export interface PodFilterSpec {
  digestOf: (obj: KubeObject) => number;
  /** The tracked source of the pods' owners: an event of a pod whose owner it lacks is dropped (owner-gone). */
  ownerSource?: string | undefined;
  /** The resource name the metrics count events under. */
  resource: string;
}

/** Whether the controller of `obj` is an App (the App created it). */
const controlledByApp = (obj: KubeObject, key: ObjectKey): boolean =>
  key.kind === 'App' && obj.metadata?.ownerReferences?.some((r) => r.controller === true) === true;

/**
 * The filter for one pod event concerning App `key`: true when it is enqueued now; updates `digests`
 * (namespace/name → digest) and the holds.
 */
export function filterPodEvent(spec: PodFilterSpec, sink: PodFilterSink, digests: Map<string, number>, ev: WatchEvent<KubeObject>, key: ObjectKey): boolean {
  const id = objectId(ev.object);
  const before = digests.get(id);
  const after = spec.digestOf(ev.object);
  if (ev.type === 'DELETED') digests.delete(id);
  else digests.set(id, after);
  const verdict = podEventVerdict(ev.type, before, after, controlledByApp(ev.object, key));
  if (verdict === 'drop') {
    sink.onIgnored(spec.resource, 'unread-fields');
    return false;
  }
  if (spec.ownerSource !== undefined && sink.known.lacks(spec.ownerSource, key)) {
    sink.holds.release(id);
    sink.onIgnored(spec.resource, 'owner-gone');
    return false;
  }
  if (verdict === 'reconcile') {
    sink.holds.release(id);
    return true;
  }
  sink.holds.hold(id, key, verdict);
  return false;
}
