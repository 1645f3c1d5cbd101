/**
 * The update policy on top of the template diff, and the words ebb uses when an
 * in-place update is not possible: the App condition InPlaceFallback, the Event, and the log line.
 */
import { ConditionType, EventReason, Reason } from '../../api/keys.ts';
import type { DiffResult, InPlacePlan } from './types.ts';

export const UpdatePolicy = { reCreate: 'ReCreate', inPlaceIfPossible: 'InPlaceIfPossible', inPlaceOnly: 'InPlaceOnly' } as const;
export type UpdatePolicy = (typeof UpdatePolicy)[keyof typeof UpdatePolicy];

/** Why an in-place update was not possible: the diff's reason and the offending JSON path. */
export interface NotInPlace {
  reason: string;
  path: string;
}

export type UpdateDecision =
  /** Delete and recreate; `fallback` is set when InPlaceIfPossible had to give up on in place. */
  | { mode: 'recreate'; fallback?: NotInPlace }
  | { mode: 'inPlace'; plan: InPlacePlan }
  /** InPlaceOnly and the change cannot be made in place: leave the pod as it is and report. */
  | { mode: 'refuse'; reason: string; path: string };

/** ReCreate always recreates; InPlaceIfPossible falls back to recreate; InPlaceOnly refuses. */
export function decideUpdate(policy: string | undefined, diff: DiffResult): UpdateDecision {
  if (policy === UpdatePolicy.inPlaceIfPossible || policy === UpdatePolicy.inPlaceOnly) {
    if (diff.ok) return { mode: 'inPlace', plan: diff.plan };
    const why = { reason: diff.reason, path: diff.path };
    return policy === UpdatePolicy.inPlaceOnly ? { mode: 'refuse', ...why } : { mode: 'recreate', fallback: why };
  }
  return { mode: 'recreate' };
}

/** The App condition for a fallback or a refusal (metav1.Condition input; the caller stamps times). */
export interface FallbackCondition {
  type: typeof ConditionType.inPlaceFallback;
  status: 'True';
  reason: typeof Reason.inPlaceNotPossible | typeof Reason.inPlaceOnlyRefused | typeof Reason.resizeRefused;
  message: string;
}

/** Shaped like the App planner's EventSpec. */
export interface FallbackEvent {
  type: 'Normal' | 'Warning';
  reason: typeof EventReason.inPlaceFallback | typeof EventReason.resizeRefused;
  action: string;
  message: string;
  related: { kind: 'Pod'; name: string; uid?: string | undefined };
}

/** A fixed log message with the data in fields (house style: no data in messages). */
export interface FallbackLog {
  level: 'info' | 'warn';
  msg: string;
  fields: { pod: string; revision: string; path: string; reason: string; policy: UpdatePolicy };
}

export interface FallbackTexts {
  condition: FallbackCondition;
  event: FallbackEvent;
  log: FallbackLog;
}

/**
 * Condition, Event and log for a decision that did not go in place although the policy asked for it: a
 * fallback to recreate (InPlaceIfPossible) or a refusal (InPlaceOnly). Undefined for every other decision.
 */
export function fallbackTexts(decision: UpdateDecision, pod: { name: string; uid?: string | undefined }, revision: string): FallbackTexts | undefined {
  if (decision.mode === 'inPlace') return undefined;
  const why = decision.mode === 'refuse' ? decision : decision.fallback;
  if (!why) return undefined;
  const refused = decision.mode === 'refuse';
  // A reason without a path (the pod's revision is gone, so there is no template to diff) names none.
  const where = why.path === '' ? '' : ` (path ${why.path})`;
  const message = refused
    ? `Pod ${pod.name} was not updated to revision ${revision}: podUpdatePolicy is InPlaceOnly and ${why.reason}${where}`
    : `Pod ${pod.name} is recreated for revision ${revision}: ${why.reason}${where}`;
  const policy = refused ? UpdatePolicy.inPlaceOnly : UpdatePolicy.inPlaceIfPossible;
  return {
    condition: { type: ConditionType.inPlaceFallback, status: 'True', reason: refused ? Reason.inPlaceOnlyRefused : Reason.inPlaceNotPossible, message },
    event: {
      type: refused ? 'Warning' : 'Normal',
      reason: EventReason.inPlaceFallback,
      action: refused ? 'Refuse' : 'Recreate',
      message,
      related: { kind: 'Pod', ...pod },
    },
    log: {
      level: refused ? 'warn' : 'info',
      msg: refused ? 'in-place update refused' : 'in-place update not possible, recreating pod',
      fields: { pod: pod.name, revision, path: why.path, reason: why.reason, policy },
    },
  };
}
