/**
 * Every label, annotation, condition, reason and field-manager name ebb writes or reads. Other code refers to
 * these constants, never to string literals, so a key is renamed in one place.
 */
import { GROUP } from './group.ts';

/** Pod labels. */
export const Label = {
  /** The owning App's name; part of every pod ebb creates. */
  app: `${GROUP}/app`,
  /** The ControllerRevision name (`<app>-<hash>`) the pod's template came from. */
  revision: `${GROUP}/revision`,
  /** The same revision name under the label upstream StatefulSet pods carry, so metrics and queries can select by it. */
  controllerRevisionHash: 'controller-revision-hash',
  /** The pod's ordinal, as upstream StatefulSet pods carry it. */
  podIndex: 'apps.kubernetes.io/pod-index',
  /** The pod's own name: a per-pod identity label, so a Service can select exactly one pod. */
  podName: 'statefulset.kubernetes.io/pod-name',
} as const;

/** Pod label: the pod's lifecycle state (`LifecycleState`), present only on pods of Apps with `spec.lifecycle`. */
export const LIFECYCLE_STATE_LABEL = `lifecycle.${GROUP}/state`;

/** Values of the pod label `lifecycle.apps.ebb.dev/state`. */
export const LifecycleState = {
  /** Created or updated in place; waits until the preNormal handlers ebb put on it are removed. */
  preparingNormal: 'PreparingNormal',
  normal: 'Normal',
  /** ebb is about to update the pod in place; waits until the inPlaceUpdate handlers are removed. */
  preparingUpdate: 'PreparingUpdate',
  /** The inPlaceUpdate hook is passed: the in-place update may run (or runs). */
  updating: 'Updating',
  /** ebb is about to delete the pod; waits until the preDelete handlers are removed. */
  preparingDelete: 'PreparingDelete',
} as const;
export type LifecycleState = (typeof LifecycleState)[keyof typeof LifecycleState];

/**
 * Pod condition ebb sets False when a hook with `markPodNotReady` starts and True when the pod is back in
 * service; it takes the pod out of Service endpoints when the template lists it in readinessGates.
 */
export const POD_CONDITION_LIFECYCLE_READY = `${GROUP}/lifecycle-ready`;

/** Pod annotations. */
export const Annotation = {
  /** JSON of the in-place update in progress: `{revision, startedAt, oldImageIDs, oldContainerIDs, newImages}`. */
  inPlaceUpdateState: `${GROUP}/inplace-update-state`,
  /** When the pod entered its current lifecycle state (RFC 3339): how long it has waited on a hook. */
  lifecycleSince: `lifecycle.${GROUP}/since`,
  /**
   * Pod template annotation: JSON object from container name to integer launch priority, e.g.
   * `{"envoy": 100, "app": 0}`; in-place updates patch containers in batches, highest priority first.
   */
  containerPriority: `${GROUP}/container-priority`,
  /**
   * Pod template annotation `kubectl rollout restart` (and `ebb rollout restart`) stamps with the time. A change
   * of it asks for new containers, so it is never applied in place: the pod is recreated.
   */
  restartedAt: 'kubectl.kubernetes.io/restartedAt',
  /**
   * JSON `{revision, restarts}`: each container's restartCount when the pod reached `revision` in place (its
   * in-place restarts included). Analysis counts a pod's restarts from these.
   */
  restartBaseline: `${GROUP}/restart-baseline`,
} as const;

/** Pod readiness gate set when `podUpdatePolicy` is not ReCreate; ebb sets it True as soon as the pod exists. */
export const READINESS_GATE_IN_PLACE_UPDATE_READY = 'InPlaceUpdateReady';

/** Condition types in `App.status.conditions`. */
export const ConditionType = {
  /** A rollout or a scale is under way (True) or the App is at its desired state (False, reason RolloutComplete). */
  progressing: 'Progressing',
  /** At least `replicas - maxUnavailable` pods are available. */
  available: 'Available',
  /** The rollout is paused, by `rollingUpdate.paused` or by a canary pause step. */
  paused: 'Paused',
  /** The spec passed the CRD schema but cannot be acted on (what CEL cannot check). */
  invalidSpec: 'InvalidSpec',
  /** The App's pods or revisions are more than one reconcile reads: it is not reconciled until they shrink. */
  readTooLarge: 'ReadTooLarge',
  failedCreatePod: 'FailedCreatePod',
  failedUpdatePod: 'FailedUpdatePod',
  /**
   * The apiserver would refuse the pods (or claims) of the update revision, as a dry run showed: no pod is
   * deleted for recreation until the template is fixed or the cluster's admission accepts them.
   */
  rolloutHeld: 'RolloutHeld',
  /** An in-place update was not possible and the pod was recreated (InPlaceIfPossible) or left (InPlaceOnly). */
  inPlaceFallback: 'InPlaceFallback',
  /** Image pre-warming: True once every node requested so far reports the update revision's images pulled. */
  imagesPrewarmed: 'ImagesPrewarmed',
  /**
   * True while any pod waits on a lifecycle hook (spec.lifecycle); the message names the pods, the hooks and
   * how long they have waited.
   */
  lifecycleHookWaiting: 'LifecycleHookWaiting',
  /** OnPodRollingUpdate: the apiserver refused to grow a claim (its StorageClass does not allow expansion); its pod waits. */
  volumeExpansionRefused: 'VolumeExpansionRefused',
  /** orderPriority: True while some pod still to update carries an ordered key whose value ends in no digit (ignored). */
  priorityLabelIgnored: 'PriorityLabelIgnored',
  /**
   * True while the App's reconciles are held because earlier ones never ended (their workers died or stalled);
   * a new generation or `ebb queue release` lifts it.
   */
  quarantined: 'Quarantined',
  /** True while the rollout to the update revision is aborted (reason: the `AbortReason`); pods go back to the current revision. */
  aborted: 'Aborted',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

export const ConditionStatus = { true: 'True', false: 'False', unknown: 'Unknown' } as const;
export type ConditionStatus = (typeof ConditionStatus)[keyof typeof ConditionStatus];

/** Machine-readable reasons for App conditions and for pod condition `InPlaceUpdateReady` (CamelCase, stable). */
export const Reason = {
  // Progressing
  rollingUpdate: 'RollingUpdate',
  scaling: 'Scaling',
  rolloutComplete: 'RolloutComplete',
  canaryStep: 'CanaryStep',
  /** Progressing: pods are missing and scaleStrategy.maxUnavailable holds their creation back. */
  scaleUpLimited: 'ScaleUpLimited',
  /** Progressing: a pod labelled specified-delete waits (maxUnavailable budget, pause, OnDelete, ordering). */
  specifiedDeletePending: 'SpecifiedDeletePending',
  /** Progressing False (and Paused True when pauseOnProgressDeadline paused it): no progress for progressDeadlineSeconds. */
  progressDeadlineExceeded: 'ProgressDeadlineExceeded',
  /** Progressing True: an aborted rollout's pods go back to the current revision. */
  rollingBack: 'RollingBack',
  /** Progressing False: an aborted rollout is back at the current revision. */
  rolloutAborted: 'RolloutAborted',
  // Aborted False
  abortRetried: 'AbortRetried',
  newUpdateRevision: 'NewUpdateRevision',
  /** An abort would have undone a revision made since the stable one: refused (the message says how to choose). */
  abortRefused: 'AbortRefused',
  // Available
  minimumReplicasAvailable: 'MinimumReplicasAvailable',
  minimumReplicasUnavailable: 'MinimumReplicasUnavailable',
  // Paused
  pausedBySpec: 'PausedBySpec',
  canaryPause: 'CanaryPause',
  canaryTimedPause: 'CanaryTimedPause',
  resumed: 'Resumed',
  // InvalidSpec
  specValid: 'SpecValid',
  specInvalid: 'SpecInvalid',
  // FailedCreatePod / FailedUpdatePod (True while the last attempt failed, False once one succeeds)
  createPodFailed: 'CreatePodFailed',
  /** FailedCreatePod: the refusal heals with time (quota, rate limit, a webhook down); retried with backoff. */
  createPodRetrying: 'CreatePodRetrying',
  // RolloutHeld
  replacementRefused: 'ReplacementRefused',
  replacementAccepted: 'ReplacementAccepted',
  updatePodFailed: 'UpdatePodFailed',
  podsCreated: 'PodsCreated',
  podsUpdated: 'PodsUpdated',
  // InPlaceFallback
  inPlaceNotPossible: 'InPlaceNotPossible',
  inPlaceOnlyRefused: 'InPlaceOnlyRefused',
  /** The kubelet refused a pod's in-place resize (PodResizeInProgress reason Error). */
  resizeRefused: 'ResizeRefused',
  /** InPlaceFallback False: no pod still to be updated needs recreating (or is refused). */
  noFallbackPending: 'NoFallbackPending',
  // ImagesPrewarmed
  /** False: no node of the next pods is known yet (not scheduled). */
  prewarmPending: 'PrewarmPending',
  /** False: some requested node has not reported the images yet. */
  imagesPulling: 'ImagesPulling',
  /** True: every requested node reports the images pulled. */
  imagesPulled: 'ImagesPulled',
  /** False: no node is pulling any more and some reported a failed pull. */
  imagePullFailed: 'ImagePullFailed',
  /** False: no node is pulling any more and some hold the pull back: their image filesystem is too full. */
  imagePullDeferred: 'ImagePullDeferred',
  /** False: no node is pulling any more and some never answered (no node daemon reported the images in time). */
  prewarmUnanswered: 'PrewarmUnanswered',
  /** False: the rollout has waited longer than the pin limit; its entries are removed until it goes on. */
  prewarmUnpinned: 'PrewarmUnpinned',
  // VolumeExpansionRefused
  expansionRefused: 'ExpansionRefused',
  noExpansionRefused: 'NoExpansionRefused',
  /** False: writing an ImageList failed (retried; the rollout goes on). */
  prewarmRequestFailed: 'PrewarmRequestFailed',
  // LifecycleHookWaiting
  waitingForPreDelete: 'WaitingForPreDelete',
  waitingForInPlaceUpdate: 'WaitingForInPlaceUpdate',
  waitingForPreNormal: 'WaitingForPreNormal',
  /** LifecycleHookWaiting False: no pod waits on a hook. */
  noHookPending: 'NoHookPending',
  // Pod condition apps.ebb.dev/lifecycle-ready
  preparingDelete: 'PreparingDelete',
  preparingUpdate: 'PreparingUpdate',
  backInService: 'BackInService',
  // PriorityLabelIgnored
  nonNumericPriority: 'NonNumericPriority',
  priorityLabelsNumeric: 'PriorityLabelsNumeric',
  // Quarantined
  workersLost: 'WorkersLost',
  released: 'Released',
  // Pod condition InPlaceUpdateReady
  startInPlaceUpdate: 'StartInPlaceUpdate',
  inPlaceUpdateDone: 'InPlaceUpdateDone',
  inPlaceContainersRestarting: 'InPlaceContainersRestarting',
  inPlaceGateHeld: 'InPlaceGateHeld',
  podCreated: 'PodCreated',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

/** Event reasons on the App (named like the upstream StatefulSet controller's where one exists). */
export const EventReason = {
  successfulCreate: 'SuccessfulCreate',
  failedCreate: 'FailedCreate',
  successfulDelete: 'SuccessfulDelete',
  failedDelete: 'FailedDelete',
  recreatingFailedPod: 'RecreatingFailedPod',
  scaleUpLimited: 'ScaleUpLimited',
  specifiedDeletePending: 'SpecifiedDeletePending',
  failedUpdate: 'FailedUpdate',
  inPlaceFallback: 'InPlaceFallback',
  /** The kubelet refused a pod's in-place resize: the pod is recreated or held, by podUpdatePolicy. */
  resizeRefused: 'ResizeRefused',
  invalidSpec: 'InvalidSpec',
  /** The App's pods or revisions are more than one reconcile reads: it is not reconciled until they shrink. */
  readTooLarge: 'ReadTooLarge',
  rolloutHeld: 'RolloutHeld',
  canaryPaused: 'CanaryPaused',
  rolloutComplete: 'RolloutComplete',
  lifecycleHookWaiting: 'LifecycleHookWaiting',
  /** A pod the App controlled no longer matches its selector: its controller reference was removed. */
  releasedPod: 'ReleasedPod',
  /** A claim's storage request raised to its template's (OnPodRollingUpdate). */
  expandingClaim: 'ExpandingClaim',
  claimExpansionRefused: 'ClaimExpansionRefused',
  progressDeadlineExceeded: 'ProgressDeadlineExceeded',
  priorityLabelIgnored: 'PriorityLabelIgnored',
  /** The App's reconciles ended workers repeatedly: held until it changes or is released. */
  quarantined: 'Quarantined',
  rolloutAborted: 'RolloutAborted',
  abortRefused: 'AbortRefused',
  rolloutRetried: 'RolloutRetried',
  rolloutPromoted: 'RolloutPromoted',
  /** An analysis measurement failed (the check fails once more than failureLimit did). */
  analysisMeasurementFailed: 'AnalysisMeasurementFailed',
  /** An analysis measurement was inconclusive (the rollout pauses once more than inconclusiveLimit were). */
  analysisMeasurementInconclusive: 'AnalysisMeasurementInconclusive',
  /** An analysis measurement could not be taken (the check fails once more than consecutiveErrorLimit did in a row). */
  analysisMeasurementError: 'AnalysisMeasurementError',
  /** A background analysis check was inconclusive: the rollout is paused. */
  analysisInconclusive: 'AnalysisInconclusive',
} as const;
export type EventReason = (typeof EventReason)[keyof typeof EventReason];

/** Server-side-apply / update field managers. */
export const FieldManager = {
  /** Everything the controller writes (pods, App status, ControllerRevisions). */
  ebb: 'ebb',
  /** The ImageList reconcile setting `pullRequestedAt` for alwaysPull entries. */
  repull: 'ebb-repull',
  /** The daemon writing ImageList status. */
  daemon: 'ebb-daemon',
} as const;
