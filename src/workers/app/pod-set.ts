/**
 * The view of an App's pods the planner works on: replicas by ordinal in [start, start+replicas), condemned
 * pods outside that range (highest ordinal first), the claims by name, the two revisions, and the partition
 * in force. Plus the accumulator the planning steps write into.
 */
import type { App } from '../../api/app.ts';
import { PodManagementPolicy } from '../../api/app-spec.ts';
import type { FallbackTexts } from '../inplace/index.ts';
import type { Action } from './actions.ts';
import type { ControllerRevision, Named, PersistentVolumeClaim, Pod, Stored } from '../../kube/types.ts';
import { getOrdinal } from './pod-predicates.ts';
import { mayRunUpdate } from './priority.ts';
import type { Wait } from '../types.ts';

export interface PodSet {
  app: Stored<App>;
  now: Date;
  minReadySeconds: number;
  /** OrderedReady: one pod at a time, each waiting for its predecessors. */
  monotonic: boolean;
  start: number;
  /** One past the last replica ordinal. */
  end: number;
  replicas: ReadonlyMap<number, Stored<Pod>>;
  /** Pods with an ordinal outside [start, end), descending. */
  condemned: readonly Stored<Pod>[];
  /** Claims by name; undefined when they were not read (only reconciles that need them list them). */
  claims: ReadonlyMap<string, Stored<PersistentVolumeClaim>> | undefined;
  current: Named<ControllerRevision>;
  update: Named<ControllerRevision>;
  /** Ordinals below this stay at (and are created from) the current revision: spec partition, raised by a canary step. */
  partition: number;
  /** Pod creation is suspended: the apiserver rejected this generation's pods as invalid. */
  createBlocked: boolean;
}

export interface Accumulator {
  actions: Action[];
  waits: Wait[];
  /**
   * Outdated pods the policy cannot update in place, highest ordinal first: what the InPlaceFallback
   * condition reports (empty when every outdated pod goes in place, or the policy is ReCreate).
   */
  fallbacks?: FallbackTexts[];
  /** Set when a step needs the claims and they were not read: the plan is redone after reading them. */
  needsClaims?: boolean;
}

export function ordinalRange(app: Stored<App>): { start: number; end: number } {
  const start = app.spec.ordinals?.start ?? 0;
  return { start, end: start + (app.spec.replicas ?? 1) };
}

/** Replicas by ordinal and condemned pods (descending); pods whose name has no ordinal are ignored. */
export function splitPods(app: Stored<App>, owned: readonly Stored<Pod>[]): { replicas: Map<number, Stored<Pod>>; condemned: Stored<Pod>[] } {
  const { start, end } = ordinalRange(app);
  const replicas = new Map<number, Stored<Pod>>();
  const condemned: Stored<Pod>[] = [];
  for (const pod of owned) {
    const ord = getOrdinal(app.metadata.name, pod.metadata.name);
    if (ord < 0) continue;
    if (ord >= start && ord < end) replicas.set(ord, pod);
    else condemned.push(pod);
  }
  const name = app.metadata.name;
  condemned.sort((a, b) => getOrdinal(name, b.metadata.name) - getOrdinal(name, a.metadata.name));
  return { replicas, condemned };
}

export function isMonotonic(app: Stored<App>): boolean {
  return (app.spec.podManagementPolicy ?? PodManagementPolicy.orderedReady) === PodManagementPolicy.orderedReady;
}

/** The revision a new pod at `ordinal` is created from (upstream newVersionedStatefulSetPod). */
export function revisionForOrdinal(set: PodSet, ordinal: number): Named<ControllerRevision> {
  return mayRunUpdate(set, ordinal) ? set.update : set.current;
}
