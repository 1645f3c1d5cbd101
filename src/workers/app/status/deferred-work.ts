/**
 * Work a plan defers on purpose (not a held rollout: that is `admission/rollout-held.ts`), and how it shows: the Progressing condition says what waits and why
 * (reason ScaleUpLimited or SpecifiedDeletePending), and one Event is recorded when the condition takes that
 * reason (not on every reconcile while it holds).
 */
import { ConditionType, EventReason, Reason } from '../../../api/keys.ts';
import type { Condition } from '../../../api/meta.ts';
import type { EventSpec } from '../model/actions.ts';
import { findCondition } from '../../shared/conditions.ts';
import type { Progress } from './replicas.ts';
import type { DeferredWork } from '../model/deferred-work.ts';

/** The Progressing state for deferred work, when there is some (checked after the rolling update's own state). */
export function deferredProgress(deferred: DeferredWork | undefined, want: number, ownedCount: number): Progress | undefined {
  const scaleUp = deferred?.scaleUp;
  if (scaleUp && scaleUp.held > 0) {
    return {
      state: 'scaleUpLimited',
      message: `scaling to ${want} pods: ${ownedCount} exist; ${scaleUp.held} not created yet while ${scaleUp.unavailable} of the App's pods are unavailable (scaleStrategy.maxUnavailable ${scaleUp.limit})`,
    };
  }
  const specified = deferred?.specifiedDelete;
  if (specified && specified.pods.length > 0) {
    return { state: 'specifiedDeletePending', message: `${specified.pods.join(', ')} labelled for deletion, waiting: ${specified.why}` };
  }
  return undefined;
}

const DEFERRED_EVENT = {
  [Reason.scaleUpLimited]: EventReason.scaleUpLimited,
  [Reason.specifiedDeletePending]: EventReason.specifiedDeletePending,
} as const;

/** The Event for Progressing newly taking a deferred-work reason (or the same reason with other pods waiting). */
export function deferredWorkEvent(previous: readonly Condition[] | undefined, next: readonly Condition[] | undefined): EventSpec | undefined {
  const now = findCondition(next, ConditionType.progressing);
  if (!now || (now.reason !== Reason.scaleUpLimited && now.reason !== Reason.specifiedDeletePending)) return undefined;
  const before = findCondition(previous, ConditionType.progressing);
  if (before?.reason === now.reason && (now.reason === Reason.scaleUpLimited || before.message === now.message)) return undefined;
  return { type: 'Normal', reason: DEFERRED_EVENT[now.reason], action: now.reason === Reason.scaleUpLimited ? 'Create' : 'Delete', message: now.message };
}
