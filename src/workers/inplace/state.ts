/**
 * The in-place update state a pod carries in annotation `apps.ebb.dev/inplace-update-state` while it is being
 * updated. Everything needed to resume lives here or on the pod itself, so any worker can
 * take over after a crash.
 */
import { Annotation, Label } from '../../api/keys.ts';
import { isRecord } from '../../common/guards.ts';
import { parseLaunchOrder, launchBatches } from './container-order.ts';
import { resizableOf, sameResizable } from '../../common/quantity.ts';
import type { InPlaceTarget } from './types.ts';
import type { Container, ContainerStatus, Pod, ResourceRequirements } from '../../kube/types.ts';

export interface InPlaceState {
  /** The revision the pod is being moved to. */
  revision: string;
  /** When the update started (ISO 8601, ms): the grace period runs from here. */
  startedAt: string;
  /** Per updated container, as seen when the update started (refreshed when its batch is patched). */
  oldImageIDs: Record<string, string>;
  oldContainerIDs: Record<string, string>;
  oldRestartCounts: Record<string, number>;
  /** Spec images before the update: what an abandoned update reverts to when the next plan does not cover it. */
  oldImages: Record<string, string>;
  /** The images this update sets, by container name (containers and initContainers). */
  newImages: Record<string, string>;
  /** cpu/memory targets resized through pods/resize before the first batch, and what they were. */
  resources: Record<string, ResourceRequirements>;
  oldResources: Record<string, ResourceRequirements>;
  /** Container names by launch priority, highest first; one (possibly empty) batch at least. */
  batches: string[][];
  /** Index of the last batch whose images were patched; -1 before the first. */
  batch: number;
  /** When each patched batch was patched (ISO 8601): a restart counts only if it started after this. */
  patchedAt: string[];
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function isState(v: unknown): v is InPlaceState {
  if (!isRecord(v)) return false;
  const maps = ['oldImageIDs', 'oldContainerIDs', 'oldRestartCounts', 'oldImages', 'newImages', 'resources', 'oldResources'];
  return (
    typeof v.revision === 'string' &&
    typeof v.startedAt === 'string' &&
    !Number.isNaN(Date.parse(v.startedAt)) &&
    maps.every((k) => isRecord(v[k])) &&
    Array.isArray(v.batches) &&
    v.batches.length > 0 &&
    v.batches.every(isStringList) &&
    Number.isInteger(v.batch) &&
    isStringList(v.patchedAt)
  );
}

export function hasStateAnnotation(pod: Pod): boolean {
  return pod.metadata.annotations?.[Annotation.inPlaceUpdateState] !== undefined;
}

/** The state on the pod; undefined when absent or not a valid state (a corrupt annotation is started over). */
export function readState(pod: Pod): InPlaceState | undefined {
  const raw = pod.metadata.annotations?.[Annotation.inPlaceUpdateState];
  if (raw === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return isState(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function serializeState(state: InPlaceState): string {
  return JSON.stringify(state);
}

export function podRevision(pod: Pod): string | undefined {
  return pod.metadata.labels?.[Label.revision];
}

export function findContainer(pod: Pod, name: string): { spec: Container; init: boolean; index: number } | undefined {
  const regular = pod.spec?.containers ?? [];
  const i = regular.findIndex((c) => c.name === name);
  if (i >= 0) return { spec: regular[i]!, init: false, index: i };
  const inits = pod.spec?.initContainers ?? [];
  const j = inits.findIndex((c) => c.name === name);
  return j >= 0 ? { spec: inits[j]!, init: true, index: j } : undefined;
}

export function findStatus(pod: Pod, name: string): ContainerStatus | undefined {
  return pod.status?.containerStatuses?.find((s) => s.name === name) ?? pod.status?.initContainerStatuses?.find((s) => s.name === name);
}

/**
 * What an abandoned update (its revision superseded before its last batch was patched) changed that the new
 * plan does not cover: those containers go back to their images and resources from before it. The new plan
 * was diffed from the pod's revision label, which an unfinished update never moved, so the old values are the
 * ones that plan assumes.
 */
function carryOver(pod: Pod, prior: InPlaceState | undefined, images: Map<string, string>, resources: Map<string, ResourceRequirements>): void {
  if (!prior || podRevision(pod) === prior.revision) return;
  prior.batches.forEach((batch, i) => {
    if (i > prior.batch) return;
    for (const c of batch) {
      const old = prior.oldImages[c];
      if (old !== undefined && !images.has(c) && findContainer(pod, c)?.spec.image !== old) images.set(c, old);
    }
  });
  for (const [c, old] of Object.entries(prior.oldResources)) {
    if (!resources.has(c) && !sameResizable(findContainer(pod, c)?.spec.resources, old)) resources.set(c, old);
  }
}

function snapshot(pod: Pod, names: Iterable<string>): Pick<InPlaceState, 'oldImageIDs' | 'oldContainerIDs' | 'oldRestartCounts'> {
  const out = { oldImageIDs: {} as Record<string, string>, oldContainerIDs: {} as Record<string, string>, oldRestartCounts: {} as Record<string, number> };
  for (const name of names) {
    const s = findStatus(pod, name);
    out.oldImageIDs[name] = s?.imageID ?? '';
    out.oldContainerIDs[name] = s?.containerID ?? '';
    out.oldRestartCounts[name] = s?.restartCount ?? 0;
  }
  return out;
}

/** The same snapshot taken again for `names` (when their batch is patched), merged into `state`. */
export function refreshSnapshot(state: InPlaceState, pod: Pod, names: readonly string[]): InPlaceState {
  const s = snapshot(pod, names);
  return {
    ...state,
    oldImageIDs: { ...state.oldImageIDs, ...s.oldImageIDs },
    oldContainerIDs: { ...state.oldContainerIDs, ...s.oldContainerIDs },
    oldRestartCounts: { ...state.oldRestartCounts, ...s.oldRestartCounts },
  };
}

/** The container priorities the pod will have once its template annotations are patched. */
function prioritiesFor(pod: Pod, target: InPlaceTarget): Map<string, number> {
  const patched = target.plan.metadata.annotations[Annotation.containerPriority];
  const value = patched === null ? undefined : (patched ?? pod.metadata.annotations?.[Annotation.containerPriority]);
  return parseLaunchOrder(value);
}

/** A fresh state for moving `pod` to `target`, taking over from `prior` (an update to another revision) if any. */
export function newState(pod: Pod, target: InPlaceTarget, now: Date, prior: InPlaceState | undefined): InPlaceState {
  const images = new Map(target.plan.images.map((i) => [i.container, i.image]));
  const resources = new Map(target.plan.resources.map((r) => [r.container, r.resources]));
  carryOver(pod, prior, images, resources);
  const changing = [...images].filter(([c, image]) => findContainer(pod, c) !== undefined && findContainer(pod, c)?.spec.image !== image);
  const resizing = [...resources].filter(([c, r]) => findContainer(pod, c)?.init === false && !sameResizable(findContainer(pod, c)?.spec.resources, r));
  const batches = launchBatches(
    changing.map(([c]) => c),
    prioritiesFor(pod, target),
  );
  return {
    revision: target.revision,
    startedAt: now.toISOString(),
    ...snapshot(pod, [...changing.map(([c]) => c), ...resizing.map(([c]) => c)]),
    oldImages: Object.fromEntries(changing.map(([c]) => [c, findContainer(pod, c)?.spec.image ?? ''])),
    newImages: Object.fromEntries(changing),
    resources: Object.fromEntries(resizing),
    oldResources: Object.fromEntries(resizing.map(([c]) => [c, resizableOf(findContainer(pod, c)?.spec.resources)])),
    batches: batches.length > 0 ? batches : [[]],
    batch: -1,
    patchedAt: [],
  };
}
