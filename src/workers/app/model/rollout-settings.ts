/**
 * The rollout settings of an App's `spec.updateStrategy`, resolved once per plan (`podSetFor` in the planner)
 * and carried on the pod set: every phase reads them there instead of re-deriving them from the spec.
 */
import type { Analysis, AnalysisCheck } from '../../../api/analysis.ts';
import type { App } from '../../../api/app.ts';
import type { PriorityStrategy } from '../../../api/priority.ts';
import { UpdateStrategyType, type CanaryStep } from '../../../api/update-strategy.ts';

export interface RolloutSettings {
  /** `type` is RollingUpdate (the default); false under OnDelete, where no pod is updated by the controller. */
  rolling: boolean;
  /** `rollingUpdate.partition` (0 unless rolling): ordinals below it stay at the current revision. */
  partition: number;
  /** `rollingUpdate.paused` as the spec says it (a canary or deadline pause entered by this plan is not in it). */
  paused: boolean;
  /** `rollingUpdate.canary.steps` (none unless rolling). */
  canarySteps: readonly CanaryStep[];
  /** `rollingUpdate.unorderedUpdate.priorityStrategy` (none unless rolling): the order pods are updated in. */
  priorityStrategy: PriorityStrategy | undefined;
  /** `rollingUpdate.podUpdatePolicy`: ReCreate (default), InPlaceIfPossible or InPlaceOnly. */
  podUpdatePolicy: string | undefined;
  /** `rollingUpdate.inPlaceUpdateStrategy.gracePeriodSeconds` (0 by default). */
  inPlaceGracePeriodSeconds: number;
  /** `rollingUpdate.rollbackOnProgressDeadline`: an exceeded progress deadline aborts the rollout. */
  rollbackOnProgressDeadline: boolean;
  /** `rollingUpdate.pauseOnProgressDeadline`: an exceeded progress deadline pauses the rollout. */
  pauseOnProgressDeadline: boolean;
  /** `rollingUpdate.maxUnavailable` as written (a count or a percentage; 1 when unset, `unavailable.ts`). */
  maxUnavailable: number | string | undefined;
  /** `rollingUpdate.analysis`: the checks defined, and the background ones. */
  analysis: Analysis | undefined;
}

export function rolloutSettings(app: { spec: App['spec'] }): RolloutSettings {
  const strategy = app.spec.updateStrategy;
  const ru = strategy?.rollingUpdate ?? {};
  const always = {
    paused: ru.paused === true,
    podUpdatePolicy: ru.podUpdatePolicy,
    inPlaceGracePeriodSeconds: ru.inPlaceUpdateStrategy?.gracePeriodSeconds ?? 0,
    maxUnavailable: ru.maxUnavailable,
    rollbackOnProgressDeadline: ru.rollbackOnProgressDeadline === true,
    pauseOnProgressDeadline: ru.pauseOnProgressDeadline === true,
    analysis: ru.analysis,
  };
  if ((strategy?.type ?? UpdateStrategyType.rollingUpdate) !== UpdateStrategyType.rollingUpdate)
    return { ...always, rolling: false, partition: 0, canarySteps: [], priorityStrategy: undefined };
  return {
    ...always,
    rolling: true,
    partition: ru.partition ?? 0,
    canarySteps: ru.canary?.steps ?? [],
    priorityStrategy: ru.unorderedUpdate?.priorityStrategy,
  };
}

/** The fields `spec/validate.ts` checks, as written: whatever the strategy type says, so a value is checked wherever it stands. */
export interface WrittenRolloutSettings {
  /** `rollingUpdate.canary.steps` as written. */
  canarySteps: readonly CanaryStep[];
  /** `rollingUpdate.analysis.checks` as written. */
  checks: readonly AnalysisCheck[];
  /** `rollingUpdate.maxUnavailable` as written. */
  maxUnavailable: number | string | undefined;
}

/** The validation view of the settings: what the spec says before any rule of the resolver applies. */
export function writtenRolloutSettings(app: { spec: App['spec'] }): WrittenRolloutSettings {
  const ru = app.spec.updateStrategy?.rollingUpdate;
  return { canarySteps: ru?.canary?.steps ?? [], checks: ru?.analysis?.checks ?? [], maxUnavailable: ru?.maxUnavailable };
}
