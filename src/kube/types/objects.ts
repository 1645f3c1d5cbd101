/**
 * The other core and API-group objects ebb (or the sandbox's simulated kubelet) reads or writes, as they
 * travel on the wire. Only the fields used are typed.
 */
import type { ObjectMeta } from './meta.ts';

export interface PersistentVolumeClaim {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: { phase?: string; [field: string]: unknown };
}

/** apps/v1 ControllerRevision. */
export interface ControllerRevision {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  /** For Apps: `{spec: {template}}`, the part of the spec a revision captures. */
  data?: unknown;
  revision: number;
}

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** events.k8s.io/v1 Event (what ebb records). */
export interface Event {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  /** metav1.MicroTime. */
  eventTime: string;
  reportingController?: string;
  reportingInstance?: string;
  action?: string;
  reason?: string;
  /** Normal or Warning. */
  type?: string;
  note?: string;
  regarding?: ObjectReference;
  related?: ObjectReference;
}

/** core/v1 Event (what a kubelet records). */
export interface CoreEvent {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  type?: string;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  reportingInstance?: string;
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
}

export interface Taint {
  key: string;
  value?: string;
  /** NoSchedule, PreferNoSchedule or NoExecute. */
  effect: string;
  timeAdded?: string;
}

export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface Node {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { podCIDR?: string; podCIDRs?: string[]; taints?: Taint[]; [field: string]: unknown };
  status?: { conditions?: NodeCondition[]; [field: string]: unknown };
}

/** coordination.k8s.io/v1 Lease (node heartbeats). */
export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string };
}
