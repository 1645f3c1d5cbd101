/**
 * What watches over a rollout besides its own steps, for the planner: the progress deadline
 * (`progress-deadline.ts`) and the report of ignored priority labels (`update-order.ts`). Pure.
 */
import type { AppStatus } from '../../../api/app-status.ts';
import { ConditionType } from '../../../api/keys.ts';
import type { Wait } from '../../types.ts';
import type { Action } from '../model/actions.ts';
import type { CanaryOutcome } from './canary.ts';
import { findCondition, setCondition, type ConditionInput } from '../../shared/conditions.ts';
import type { PodSet } from '../pods/pod-set.ts';
import { priorityReport } from './update-order.ts';
import { progressDeadline, withDeadlineStatus, type DeadlineOutcome } from './progress-deadline.ts';

export interface Guards {
  deadline: DeadlineOutcome;
  priorityCondition: ConditionInput | undefined;
  /** Events and the deadline's pause, to run before the rollout's own actions. */
  actions: Action[];
  waits: Wait[];
  /** No pod is started: spec paused, a canary `pause: {}` entered now, or the deadline pausing the rollout now. */
  paused: boolean;
}

/** `active`: a rollout is under way (the current and update revisions differ). */
export function planGuards(set: PodSet, rollout: { active: boolean; canary: CanaryOutcome }): Guards {
  const specPaused = set.rollout.paused || rollout.canary.pauseSpec;
  const deadline = progressDeadline({
    set,
    rolling: set.rollout.rolling,
    active: rollout.active,
    paused: specPaused || rollout.canary.pause !== undefined,
    step: rollout.canary.status?.step ?? 0,
  });
  const report = priorityReport(set, findCondition(set.app.status?.conditions, ConditionType.priorityLabelIgnored));
  const actions = [...deadline.actions, ...(report.event ? [{ kind: 'event' as const, event: report.event }] : [])];
  const waits = deadline.wait ? [deadline.wait] : [];
  return { deadline, priorityCondition: report.condition, actions, waits, paused: specPaused || deadline.pauseSpec };
}

export function withGuardStatus(status: AppStatus, guards: Guards, now: Date, generation: number | undefined): AppStatus {
  const withDeadline = withDeadlineStatus(status, guards.deadline, now, generation);
  if (!guards.priorityCondition) return withDeadline;
  return { ...withDeadline, conditions: setCondition(withDeadline.conditions, guards.priorityCondition, now, generation) };
}
