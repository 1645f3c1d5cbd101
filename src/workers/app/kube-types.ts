/**
 * The shapes of the Kubernetes objects the App reconcile reads and writes: only the fields it uses are typed;
 * everything else is carried through untouched.
 */
import type { ObjectMeta } from '../../api/meta.ts';

export type { ObjectMeta };
export type OwnerReference = NonNullable<ObjectMeta['ownerReferences']>[number];

export interface PodCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  [field: string]: unknown;
}

export interface PodSpec {
  hostname?: string;
  subdomain?: string;
  volumes?: Volume[];
  readinessGates?: { conditionType: string }[];
  [field: string]: unknown;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: PodSpec;
  status?: { phase?: string; conditions?: PodCondition[]; [field: string]: unknown };
}

export interface PersistentVolumeClaim {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: { phase?: string };
}

export interface ControllerRevision {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  /** For Apps: `{spec: {template}}`, the part of the spec a revision captures. */
  data?: unknown;
  revision: number;
}

/** Pod phases (core/v1). */
export const PodPhase = { pending: 'Pending', running: 'Running', succeeded: 'Succeeded', failed: 'Failed' } as const;
