/**
 * App annotations ebb is done with, as a pure decision: each is removed once it can no longer mean anything,
 * so it never acts on a later rollout.
 *
 * - `paused-by` (ebb's note that the pause is its own): once `rollingUpdate.paused` is no longer true. A
 *   person who resumed and paused again between two reconciles keeps the note; `ebb rollout pause` removes it.
 */
import type { App } from '../../../api/app.ts';
import { RolloutAnnotation } from '../../../api/rollout-abort.ts';
import type { Stored } from '../../../kube/types.ts';
import type { Action } from '../actions.ts';

/** The revisions of the rollout a plan works on. */
export interface RolloutNames {
  current: string;
  update: string;
}

/** The annotations of `app` to remove now. */
export function servedAnnotations(app: Stored<App>): string[] {
  const annotations = app.metadata.annotations ?? {};
  const keys: string[] = [];
  if (annotations[RolloutAnnotation.pausedBy] !== undefined && app.spec.updateStrategy?.rollingUpdate?.paused !== true) keys.push(RolloutAnnotation.pausedBy);
  return keys;
}

/**
 * The write that removes them, after the plan's `actions`. A plan that pauses or lifts a pause writes
 * `paused-by` itself, so that note is left to it.
 */
export function clearServed(app: Stored<App>, actions: readonly Action[]): Action[] {
  const pausing = actions.some((a) => a.kind === 'pauseRollout');
  const keys = servedAnnotations(app).filter((k) => !(pausing && k === RolloutAnnotation.pausedBy));
  return keys.length > 0 ? [{ kind: 'clearAnnotations', keys }] : [];
}
