/**
 * The App status as a pure function of what was observed (upstream computeReplicaStatus and
 * completeRollingUpdate) plus ebb's conditions.
 */
import type { Condition } from '../../../api/meta.ts';
import { ConditionType, Reason } from '../../../api/keys.ts';
import { podIsUpdatingInPlace, readState } from '../../inplace/index.ts';
import type { Pod } from '../../../kube/types.ts';
import { availableAtMs, getPodRevision, isRunningAndAvailable, isRunningAndReady, isTerminating } from '../pods/predicates.ts';
import { findCondition, setCondition, type ConditionInput } from '../../shared/conditions.ts';
import type { Wait } from '../../types.ts';

export interface ReplicaCounts {
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
  currentReplicas: number;
  updatedReplicas: number;
  updatedReadyReplicas: number;
}

/**
 * The revision a pod counts for: the one its in-place update is moving it to while that update runs (the pod is
 * committed to it and counts as unavailable meanwhile), else its revision label. So a pod's start, image patch
 * and relabel move no counter one by one: the counters change once per pod.
 */
function countedRevision(pod: Pod): string | undefined {
  return readState(pod)?.revision ?? getPodRevision(pod);
}

export function replicaCounts(pods: readonly Pod[], minReadySeconds: number, now: Date, current: string, update: string): ReplicaCounts {
  const c: ReplicaCounts = { replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0 };
  for (const pod of pods) {
    c.replicas++;
    // A pod being updated in place is about to restart (or restarts) containers: neither ready nor available.
    const ready = isRunningAndReady(pod) && !podIsUpdatingInPlace(pod);
    if (ready) c.readyReplicas++;
    if (ready && isRunningAndAvailable(pod, minReadySeconds, now)) c.availableReplicas++;
    if (isTerminating(pod)) continue;
    const revision = countedRevision(pod);
    if (revision === current) c.currentReplicas++;
    if (revision === update) {
      c.updatedReplicas++;
      if (ready) c.updatedReadyReplicas++;
    }
  }
  return c;
}

/** When the next ready pod becomes available (minReadySeconds), so status and ordered creation move on time. */
export function availabilityWait(pods: readonly Pod[], minReadySeconds: number, now: Date): Wait | undefined {
  let soonest = Number.POSITIVE_INFINITY;
  for (const pod of pods) {
    const at = availableAtMs(pod, minReadySeconds);
    if (at !== undefined && at > now.getTime()) soonest = Math.min(soonest, at);
  }
  return Number.isFinite(soonest) ? { reason: 'min-ready-seconds', afterMs: soonest - now.getTime() } : undefined;
}

export type Progress =
  | { state: 'complete' | 'aborted'; message: string }
  | { state: 'scaling' | 'rollingUpdate' | 'canary' | 'scaleUpLimited' | 'specifiedDeletePending' | 'rollingBack'; message: string };

export type PauseState = 'spec' | 'canaryManual' | 'canaryTimed' | undefined;

interface ConditionFacts {
  specReplicas: number;
  maxUnavailable: number;
  counts: ReplicaCounts;
  progress: Progress;
  pause: PauseState;
  pauseMessage: string;
  createsPlanned: boolean;
  updatesPlanned: boolean;
}

const progressReason = {
  complete: Reason.rolloutComplete,
  scaling: Reason.scaling,
  rollingUpdate: Reason.rollingUpdate,
  canary: Reason.canaryStep,
  scaleUpLimited: Reason.scaleUpLimited,
  specifiedDeletePending: Reason.specifiedDeletePending,
  rollingBack: Reason.rollingBack,
  aborted: Reason.rolloutAborted,
} as const;

function pausedCondition(facts: ConditionFacts): ConditionInput {
  const reasons = { spec: Reason.pausedBySpec, canaryManual: Reason.canaryPause, canaryTimed: Reason.canaryTimedPause } as const;
  if (facts.pause === undefined) return { type: ConditionType.paused, status: 'False', reason: Reason.resumed, message: 'the rollout is not paused' };
  return { type: ConditionType.paused, status: 'True', reason: reasons[facts.pause], message: facts.pauseMessage };
}

/** Sets condition `input` unless it is False and absent so far (False conditions appear only once they were True). */
function setIfRelevant(list: Condition[], input: ConditionInput, now: Date, generation: number | undefined): Condition[] {
  if (input.status === 'False' && !findCondition(list, input.type)) return list;
  return setCondition(list, input, now, generation);
}

/** Progressing, Available, Paused; FailedCreatePod/FailedUpdatePod cleared when the plan retries what failed. */
export function appConditions(previous: readonly Condition[] | undefined, facts: ConditionFacts, now: Date, generation: number | undefined): Condition[] {
  let list = [...(previous ?? [])];
  const { counts } = facts;
  list = setCondition(
    list,
    {
      type: ConditionType.progressing,
      status: facts.progress.state === 'complete' || facts.progress.state === 'aborted' ? 'False' : 'True',
      reason: progressReason[facts.progress.state],
      message: facts.progress.message,
    },
    now,
    generation,
  );
  const needed = Math.max(0, facts.specReplicas - facts.maxUnavailable);
  const available = counts.availableReplicas >= needed;
  list = setCondition(
    list,
    {
      type: ConditionType.available,
      status: available ? 'True' : 'False',
      reason: available ? Reason.minimumReplicasAvailable : Reason.minimumReplicasUnavailable,
      message: `${counts.availableReplicas} of ${facts.specReplicas} pods available (at least ${needed} required)`,
    },
    now,
    generation,
  );
  list = setIfRelevant(list, pausedCondition(facts), now, generation);
  if (facts.createsPlanned && findCondition(list, ConditionType.failedCreatePod)?.status === 'True') {
    list = setCondition(
      list,
      { type: ConditionType.failedCreatePod, status: 'False', reason: Reason.podsCreated, message: 'creating pods again' },
      now,
      generation,
    );
  }
  if (facts.updatesPlanned && findCondition(list, ConditionType.failedUpdatePod)?.status === 'True') {
    list = setCondition(
      list,
      { type: ConditionType.failedUpdatePod, status: 'False', reason: Reason.podsUpdated, message: 'updating pods again' },
      now,
      generation,
    );
  }
  return list;
}
