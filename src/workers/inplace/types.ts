/**
 * The slice of core/v1 Pod and PodTemplateSpec the in-place update reads and writes. Only the fields used here
 * are typed; everything else on the objects is carried through untouched. Public functions take the looser
 * `PodLike` so any pod type read from the apiserver (the App planner's included) can be passed as is.
 */

export type ResourceList = Record<string, string>;

export interface Resources {
  requests?: ResourceList;
  limits?: ResourceList;
  [field: string]: unknown;
}

export interface ContainerSpec {
  name: string;
  image: string;
  /** Only on init containers: `Always` makes it a sidecar (restartable init container). */
  restartPolicy?: string;
  resources?: Resources;
  resizePolicy?: { resourceName: string; restartPolicy: string }[];
  [field: string]: unknown;
}

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  [field: string]: unknown;
}

export interface ContainerStatus {
  name: string;
  image?: string;
  imageID?: string;
  containerID?: string;
  ready?: boolean;
  restartCount?: number;
  state?: { running?: { startedAt?: string }; waiting?: { reason?: string }; terminated?: unknown };
  resources?: Resources;
}

export interface PodMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
}

export interface InPlacePod {
  metadata: PodMeta;
  spec?: {
    containers?: ContainerSpec[];
    initContainers?: ContainerSpec[];
    readinessGates?: { conditionType: string }[];
    [field: string]: unknown;
  };
  status?: {
    phase?: string;
    observedGeneration?: number;
    conditions?: PodCondition[];
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
    [field: string]: unknown;
  };
}

/** Any pod object as read from the apiserver. */
export interface PodLike {
  metadata: PodMeta;
  spec?: unknown;
  status?: unknown;
}

/** A pod read from the apiserver, viewed through the fields this module uses. */
export function asPod(pod: PodLike): InPlacePod {
  return pod as InPlacePod;
}

export interface TemplateContainer {
  name: string;
  image: string;
  [field: string]: unknown;
}

/** Any pod template (`App.spec.template`, a revision's template). */
export interface TemplateLike {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; [field: string]: unknown };
  spec: { containers: readonly TemplateContainer[]; initContainers?: readonly TemplateContainer[]; [field: string]: unknown };
}

/** What an in-place update changes on a pod, computed from the diff of two templates. */
export interface InPlacePlan {
  /** Image replacements, in template order (containers, then initContainers). */
  images: { container: string; image: string; init?: boolean }[];
  /** Template label/annotation changes as a merge patch: a value sets, null removes. */
  metadata: { labels: Record<string, string | null>; annotations: Record<string, string | null> };
  /** New cpu/memory requests and limits of containers whose resources change (applied through pods/resize). */
  resources: { container: string; resources: Resources }[];
}

export const EMPTY_PLAN: InPlacePlan = Object.freeze({ images: [], metadata: { labels: {}, annotations: {} }, resources: [] });

export type DiffResult = { ok: true; plan: InPlacePlan } | { ok: false; reason: string; path: string };

/** What the App planner asks of one pod: move it to `revision` by `plan`. */
export interface InPlaceTarget {
  /** The update revision's name (the pod's revision label once done). */
  revision: string;
  /** `canUpdateInPlace(template of the pod's revision, template of revision).plan`. */
  plan: InPlacePlan;
  /** `rollingUpdate.inPlaceUpdateStrategy.gracePeriodSeconds`: the gate is False this long before anything changes. */
  gracePeriodSeconds: number;
}
