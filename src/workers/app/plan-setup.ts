/**
 * What every phase of a plan shares, built once before the first one: the pod set (ordinals, replicas and
 * condemned pods, the two revisions, the App's rollout settings) and the canary outcome that sets the
 * partition in force.
 */
import type { App } from '../../api/app.ts';
import { ConditionType, EventReason } from '../../api/keys.ts';
import type { Pod, Stored } from '../../kube/types.ts';
import type { Action } from './actions.ts';
import type { Observed } from './planner.ts';
import { canaryProgress, type CanaryOutcome } from './rollout/canary.ts';
import { rolloutSettings, type RolloutSettings } from './rollout/settings.ts';
import { priorityReached } from './rollout/update-order.ts';
import { getPodRevision, isRunningAndAvailable, isTerminating } from './pods/predicates.ts';
import { floorForTop, isMonotonic, ordinalRange, type PodSet, splitPods } from './pods/pod-set.ts';
import type { ResolvedRevisions } from './revisions/revisions.ts';
import { isTrueFor } from './status/conditions.ts';

/** Whether the `target` highest-ordinal replicas (not below the partition) run the update revision and are available. */
function reachedFor(set: Omit<PodSet, 'partition'>, partition: number): (target: number) => boolean {
  if (set.rollout.priorityStrategy) return priorityReached(set, set.minReadySeconds, set.now, partition);
  return (target) => {
    const floor = Math.max(partition, floorForTop(set, target));
    for (const ord of set.ordinals) {
      if (ord < floor) continue;
      const pod = set.replicas.get(ord);
      if (!pod || isTerminating(pod) || getPodRevision(pod) !== set.update.metadata.name || !isRunningAndAvailable(pod, set.minReadySeconds, set.now))
        return false;
    }
    return true;
  };
}

function canaryFor(app: Stored<App>, base: Omit<PodSet, 'partition'>): CanaryOutcome {
  return canaryProgress({
    steps: base.rollout.canarySteps,
    replicas: base.ordinals.length,
    active: base.current.metadata.name !== base.update.metadata.name,
    sameRevision: app.status?.updateRevision === base.update.metadata.name,
    status: app.status?.canary,
    specPaused: base.rollout.paused,
    now: base.now,
    reached: reachedFor(base, base.rollout.partition),
  });
}

/** The pod set of one plan, with the partition in force: the spec's, raised while a canary step holds pods back. */
export function podSetFor(
  app: Stored<App>,
  owned: readonly Stored<Pod>[],
  observed: Observed,
  revs: ResolvedRevisions,
  now: Date,
): { set: PodSet; canary: CanaryOutcome } {
  const { start, end, ordinals } = ordinalRange(app);
  const { replicas, condemned } = splitPods(app, owned);
  const generation = app.metadata.generation;
  const rollout: RolloutSettings = rolloutSettings(app);
  const base: Omit<PodSet, 'partition'> = {
    app,
    now,
    rollout,
    minReadySeconds: app.spec.minReadySeconds ?? 0,
    monotonic: isMonotonic(app),
    start,
    end,
    ordinals,
    replicas,
    condemned,
    claims: observed.claims && new Map(observed.claims.map((c) => [c.metadata.name, c])),
    current: revs.current,
    update: revs.update,
    createBlocked:
      isTrueFor(app.status?.conditions, ConditionType.invalidSpec, generation) && isTrueFor(app.status?.conditions, ConditionType.failedCreatePod, generation),
  };
  const canary = canaryFor(app, base);
  const partition = canary.target === undefined ? rollout.partition : Math.max(rollout.partition, floorForTop(base, canary.target));
  return { set: { ...base, partition }, canary };
}

/** A canary `pause: {}` entered now: the spec write that pauses the rollout, and its Event. */
export function canaryActions(app: Stored<App>, canary: CanaryOutcome): Action[] {
  const actions: Action[] = [];
  const step = canary.status?.step ?? 0;
  if (canary.pauseSpec) actions.push({ kind: 'pauseRollout', resourceVersion: app.metadata.resourceVersion, step });
  if (canary.enteredManualPause) {
    const message = `canary step ${step + 1}: rollout paused; set spec.updateStrategy.rollingUpdate.paused to false to continue`;
    actions.push({ kind: 'event', event: { type: 'Normal', reason: EventReason.canaryPaused, action: 'Pause', message } });
  }
  return actions;
}
