/**
 * The Kubernetes object types ebb reads and writes, in one place, typed as they travel on the wire (JSON, with
 * timestamps as strings). `Stored<T>` is an object as the apiserver returns it (name, namespace, uid and
 * resourceVersion set); `Named<T>` one built to be created.
 */
export type * from './types/meta.ts';
export type * from './types/pod.ts';
export { PodPhase } from './types/pod.ts';
export type * from './types/objects.ts';
