/**
 * metav1 shapes as they travel on the wire (JSON): timestamps are RFC 3339 strings, absent fields are absent.
 * Only the fields ebb reads or writes are typed.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  /** Apply or Update. */
  operation?: string;
  apiVersion?: string;
  /** Empty for the main resource, e.g. `status` for the status subresource. */
  subresource?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
}

/** Any Kubernetes object, as far as its identity goes. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface List<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

/** A list as the client returns it: the resourceVersion to watch from, and where the next page starts. */
export interface ListResult<T> {
  metadata: { resourceVersion: string; continue?: string };
  items: T[];
}

/** What the apiserver sets on every object it stores. */
export interface StoredMeta {
  name: string;
  uid: string;
  resourceVersion: string;
}

/**
 * A namespaced object as read from (or returned by a write to) the apiserver: name, namespace, uid and
 * resourceVersion are always there.
 */
export type Stored<T extends KubeObject> = T & { metadata: StoredMeta & { namespace: string } };

/** A cluster-scoped object as read from the apiserver (ImageList, Node). */
export type ClusterStored<T extends KubeObject> = T & { metadata: StoredMeta };

/** A namespaced object built to be created: named by construction, not yet stored. */
export type Named<T extends KubeObject> = T & { metadata: { name: string; namespace: string } };
