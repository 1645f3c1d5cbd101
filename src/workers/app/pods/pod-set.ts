/**
 * `pods/` owns the pod model of a plan: the pod set (this file), what a pod's fields say (`predicates.ts`), how
 * a pod is built from a revision (`builder.ts`) and label selectors (`selector.ts`).
 *
 * The view of an App's pods the planner works on: replicas by ordinal (the first `replicas` ordinals from
 * `ordinals.start` that are not reserved), condemned pods at any other ordinal (highest first), the claims by name, the two revisions, and the partition
 * in force. Plus the accumulator the planning steps write into.
 */
import type { App } from '../../../api/app.ts';
import { PodManagementPolicy } from '../../../api/app-spec.ts';
import type { FallbackTexts } from '../../inplace/index.ts';
import type { Action } from '../model/actions.ts';
import type { ControllerRevision, Named, PersistentVolumeClaim, Pod, Stored } from '../../../kube/types.ts';
import { getOrdinal } from './predicates.ts';
import { isReserved, parseReserveOrdinals, replicaOrdinals, type OrdinalRanges } from '../../../api/reserve-ordinals.ts';
import type { Wait } from '../../types.ts';
import type { RolloutSettings } from '../model/rollout-settings.ts';
import type { DeferredWork } from '../model/deferred-work.ts';
import type { AbortStatus } from '../../../api/rollout-abort.ts';

export interface PodSet {
  app: Stored<App>;
  now: Date;
  minReadySeconds: number;
  /** OrderedReady: one pod at a time, each waiting for its predecessors. */
  monotonic: boolean;
  start: number;
  /** One past the last replica ordinal. */
  end: number;
  /** The replica ordinals, ascending: [start, end) without the reserved ones (`spec.reserveOrdinals`). */
  ordinals: readonly number[];
  replicas: ReadonlyMap<number, Stored<Pod>>;
  /** Pods at any other ordinal (outside [start, end) or reserved), descending. */
  condemned: readonly Stored<Pod>[];
  /** Claims by name; undefined when they were not read (only reconciles that need them list them). */
  claims: ReadonlyMap<string, Stored<PersistentVolumeClaim>> | undefined;
  current: Named<ControllerRevision>;
  update: Named<ControllerRevision>;
  /** The App's rollout settings (`spec.updateStrategy`), resolved once for the plan. */
  rollout: RolloutSettings;
  /** Ordinals below this stay at (and are created from) the current revision: spec partition, raised by a canary step. */
  partition: number;
  /** Pod creation is suspended: the apiserver rejected this generation's pods as invalid. */
  createBlocked: boolean;
  /**
   * The rollout is aborted (`rollout/abort.ts`): `update` is the stable revision (the plan's target), `from` the
   * template's revision (what status calls updateRevision), `abort` the record.
   */
  aborted?: { from: Named<ControllerRevision>; abort: AbortStatus } | undefined;
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
  /** Work the plan holds back on purpose (scale-up limit, specified deletes waiting): shown in Progressing. */
  deferred?: DeferredWork;
}

interface OrdinalRange {
  start: number;
  /** One past the last replica ordinal. */
  end: number;
  /** The replica ordinals, ascending. */
  ordinals: number[];
  /** Reserved ordinals (`spec.reserveOrdinals`), merged. */
  reserved: OrdinalRanges;
}

/** The replica ordinals; a malformed `reserveOrdinals` (refused by the planner as an invalid spec) reserves nothing. */
export function ordinalRange(app: Pick<App, 'spec'>): OrdinalRange {
  const start = app.spec.ordinals?.start ?? 0;
  const parsed = parseReserveOrdinals(app.spec.reserveOrdinals);
  const reserved = parsed.ok ? parsed.ranges : [];
  const ordinals = replicaOrdinals(start, app.spec.replicas ?? 1, reserved);
  return { start, end: (ordinals[ordinals.length - 1] ?? start - 1) + 1, ordinals, reserved };
}

/** Replicas by ordinal and condemned pods (descending); pods whose name has no ordinal are ignored. */
export function splitPods(app: Stored<App>, owned: readonly Stored<Pod>[]): { replicas: Map<number, Stored<Pod>>; condemned: Stored<Pod>[] } {
  const { start, end, reserved } = ordinalRange(app);
  const replicas = new Map<number, Stored<Pod>>();
  const condemned: Stored<Pod>[] = [];
  for (const pod of owned) {
    const ord = getOrdinal(app.metadata.name, pod.metadata.name);
    if (ord < 0) continue;
    if (ord >= start && ord < end && !isReserved(reserved, ord)) replicas.set(ord, pod);
    else condemned.push(pod);
  }
  const name = app.metadata.name;
  condemned.sort((a, b) => getOrdinal(name, b.metadata.name) - getOrdinal(name, a.metadata.name));
  return { replicas, condemned };
}

export function isMonotonic(app: Stored<App>): boolean {
  return (app.spec.podManagementPolicy ?? PodManagementPolicy.orderedReady) === PodManagementPolicy.orderedReady;
}

/** The lowest ordinal of the `count` highest replica ordinals (`end` when count is 0): a canary step's partition. */
export function floorForTop(set: Pick<PodSet, 'ordinals' | 'end' | 'start'>, count: number): number {
  if (count <= 0) return set.end;
  return set.ordinals[set.ordinals.length - count] ?? set.start;
}
