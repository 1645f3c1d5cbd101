/**
 * Condition RolloutHeld (pure): True while the replacements of the update revision would be refused by the
 * apiserver (a dry run said so), with its message, and a Warning Event when it starts or its message changes.
 * It goes back to False once a plan recreates pods again (their replacements passed the dry run), the rollout
 * has nothing left to recreate, or the spec changed (the next dry run decides afresh).
 */
import type { AppStatus } from '../../../api/app-status.ts';
import { ConditionType, EventReason, Reason } from '../../../api/keys.ts';
import type { Condition } from '../../../api/meta.ts';
import type { EventSpec } from '../model/actions.ts';
import { findCondition, setCondition } from '../../shared/conditions.ts';
import type { Hold } from './replacement.ts';

export interface RolloutHeldInput {
  hold: Hold | undefined;
  /** The plan deletes pods to recreate them: their replacements were dry-run and accepted. */
  recreates: boolean;
  /** The conditions as the App had them (what an Event compares with). */
  previous: readonly Condition[] | undefined;
  generation: number | undefined;
  now: Date;
}

/** Whether the App's status says its rollout is held. */
export function isHeld(app: { status?: AppStatus | undefined }): boolean {
  return findCondition(app.status?.conditions, ConditionType.rolloutHeld)?.status === 'True';
}

function rolloutHeldMessage(hold: Hold): string {
  const pods = hold.pods.length === 1 ? `pod ${hold.pods[0] ?? ''} is` : `pods ${hold.pods.join(', ')} are`;
  return (
    `the apiserver would refuse the pods of revision ${hold.revision} (${hold.refusal.code}): ${hold.refusal.message}; ` +
    `${pods} kept running; fix spec.template (or the policy that refuses it) and the rollout goes on`
  );
}

/** The status with RolloutHeld brought up to date. */
export function withRolloutHeldCondition(status: AppStatus, input: RolloutHeldInput): AppStatus {
  const { hold, generation, now } = input;
  if (hold) {
    const condition = { type: ConditionType.rolloutHeld, status: 'True' as const, reason: Reason.replacementRefused, message: rolloutHeldMessage(hold) };
    return { ...status, conditions: setCondition(status.conditions, condition, now, generation) };
  }
  const held = findCondition(status.conditions, ConditionType.rolloutHeld);
  if (held?.status !== 'True') return status;
  const done = status.currentRevision !== undefined && status.currentRevision === status.updateRevision;
  if (!input.recreates && !done && held.observedGeneration === generation) return status;
  const condition = {
    type: ConditionType.rolloutHeld,
    status: 'False' as const,
    reason: Reason.replacementAccepted,
    message: done ? 'the rollout is complete' : 'the replacement pods are accepted',
  };
  return { ...status, conditions: setCondition(status.conditions, condition, now, generation) };
}

/** The Warning Event for a hold that is new or whose message changed. */
export function rolloutHeldEvent(input: RolloutHeldInput): EventSpec | undefined {
  if (!input.hold) return undefined;
  const message = rolloutHeldMessage(input.hold);
  const previous = findCondition(input.previous, ConditionType.rolloutHeld);
  if (previous?.status === 'True' && previous.message === message) return undefined;
  return { type: 'Warning', reason: EventReason.rolloutHeld, action: 'Hold', message };
}
