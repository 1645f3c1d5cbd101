/**
 * What the planner asks the executor to do. Each action is one apiserver write (or one Event), carries its
 * own preconditions (UID for deletes, resourceVersion for updates) and, for pod writes, the Event to record
 * once it succeeded.
 */
import type { EventReason, LifecycleState } from '../../../api/keys.ts';
import type { FallbackLog, InPlaceStep } from '../../inplace/index.ts';
import type { ControllerRevision, Named, OwnerReference, PersistentVolumeClaim, Pod, PodCondition, Stored } from '../../../kube/types.ts';

export interface EventSpec {
  type: 'Normal' | 'Warning';
  reason: EventReason;
  /** Short verb for events.k8s.io `action`, e.g. Create, Delete, Pause. */
  action: string;
  message: string;
  /** The pod (or claim) the event is about, if any. */
  related?: { kind: 'Pod' | 'PersistentVolumeClaim'; name: string; uid?: string | undefined };
}

/**
 * Why a pod is deleted: scale-down, failed-pod replacement, an update by recreation, its ordinal reserved
 * (`spec.reserveOrdinals`), or its specified-delete label (recreated with the same identity).
 */
export type DeleteCause = 'condemned' | 'failed' | 'update' | 'reserved' | 'specified';

/** An in-place update that fell back to recreation: the Event and log line recorded when the pod is deleted. */
interface FallbackNote {
  event: EventSpec;
  log: FallbackLog;
}

/**
 * What a pod deleted for recreation is replaced with: the pod (and the claims of its ordinal) built from
 * `revision`. Before the delete, the reconcile has the apiserver dry-run their creation, so a pod is never
 * deleted when its replacement would be refused.
 */
export interface Replacement {
  revision: string;
  pod: Named<Pod>;
  claims: Named<PersistentVolumeClaim>[];
}

export type Action =
  | { kind: 'createRevision'; revision: Named<ControllerRevision> }
  | { kind: 'renumberRevision'; name: string; resourceVersion: string | undefined; revision: number }
  | { kind: 'adoptRevision'; name: string; resourceVersion: string | undefined; ownerReferences: OwnerReference[]; revision: number }
  | { kind: 'deleteRevision'; name: string; uid: string | undefined }
  | { kind: 'adoptPod'; name: string; resourceVersion: string | undefined; ownerReferences: OwnerReference[] }
  | { kind: 'fixPodIdentity'; name: string; resourceVersion: string | undefined; labels: Record<string, string> }
  | { kind: 'createPvc'; pvc: Named<PersistentVolumeClaim>; ordinal: number }
  | { kind: 'setPvcOwners'; name: string; resourceVersion: string | undefined; ownerReferences: OwnerReference[] }
  /** OnPodRollingUpdate: raise claim `name`'s storage request to `storage` before Pod `pod` is updated (resourceVersion precondition). */
  | { kind: 'expandPvc'; name: string; resourceVersion: string | undefined; storage: string; from: string | undefined; pod: string; ordinal: number }
  | { kind: 'createPod'; pod: Named<Pod>; ordinal: number; revision: string }
  | {
      kind: 'deletePod';
      name: string;
      uid: string | undefined;
      ordinal: number;
      cause: DeleteCause;
      revision: string | undefined;
      fallback?: FallbackNote | undefined;
      /** For causes `update`, `failed` and `specified`: what the pod is recreated as. */
      replacement?: Replacement | undefined;
    }
  /**
   * One step of a pod's in-place update (docs/architecture.md), computed from `pod` as read: at most one write,
   * with the pod's resourceVersion as precondition. `revision` is the revision the pod is moved to.
   */
  | { kind: 'inPlaceStep'; name: string; uid: string | undefined; ordinal: number; revision: string; pod: Stored<Pod>; step: InPlaceStep }
  /** Set readiness gate InPlaceUpdateReady True on a pod that has the gate and no update in progress (a new pod). */
  | { kind: 'markGateReady'; name: string; uid: string | undefined; pod: Stored<Pod> }
  /**
   * Lifecycle hooks: move the pod to lifecycle state `state` (label, and `since` in an annotation), adding
   * `labels` and `finalizers` (the preNormal handlers ebb arms) and setting `condition` (lifecycle-ready), in one
   * pods/status write with the pod's resourceVersion as precondition.
   */
  | {
      kind: 'podLifecycle';
      name: string;
      uid: string | undefined;
      pod: Stored<Pod>;
      state: LifecycleState;
      since: string;
      labels?: Record<string, string>;
      finalizers?: string[];
      condition?: PodCondition;
    }
  /**
   * Set spec.updateStrategy.rollingUpdate.paused (true unless `paused` says false; resourceVersion
   * precondition), and in the same write annotation `rollout.apps.ebb.dev/paused-by` (`pausedBy`: its value,
   * or null to remove it): every pause ebb sets names its cause, so an abort can tell it from a person's.
   */
  | { kind: 'pauseRollout'; resourceVersion: string | undefined; step: number; paused?: boolean | undefined; pausedBy?: string | null | undefined }
  /**
   * Remove App annotations ebb is done with (requests served, a paused-by note whose pause is gone): a merge
   * patch guarded by the App's resourceVersion as this reconcile read it or last wrote it.
   */
  | { kind: 'clearAnnotations'; keys: string[] }
  /** An Event on the App, with a log line when the Event reports a decision (an in-place update refused). */
  | { kind: 'event'; event: EventSpec; log?: FallbackLog | undefined }
  /**
   * Pre-warm: server-side apply, with the App's own field manager, of the update revision's images into the
   * ImageList `node` (created when absent), plus the label that marks the ImageList as holding this App's
   * entries; its value names the image set. Best effort: a failure never stops the reconcile.
   */
  | {
      kind: 'requestPrewarm';
      node: string;
      fieldManager: string;
      label: { key: string; value: string };
      images: string[];
      /** The pod template's first image pull Secret, named on each entry (used only where pull secrets are enabled). */
      pullSecret?: { namespace: string; name: string } | undefined;
      /** When the request is made (RFC 3339), written as an annotation under the label's key: the clock of the answer timeout. */
      requestedAt?: string | undefined;
    }
  /**
   * Pre-warm: server-side apply of nothing with the App's field manager, which removes this App's entries and
   * label from ImageList `node` and nothing else (an entry another manager also lists stays). `uid` is a
   * precondition, so an ImageList deleted meanwhile is not created again. Best effort.
   */
  | { kind: 'removePrewarm'; node: string; uid: string | undefined; fieldManager: string };
