/**
 * The in-place update's own shapes: the templates it compares and the plan it derives. Pods are the shared
 * core/v1 type of src/kube/types.ts.
 */
import type { ResourceRequirements } from '../../kube/types.ts';

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
  resources: { container: string; resources: ResourceRequirements }[];
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
