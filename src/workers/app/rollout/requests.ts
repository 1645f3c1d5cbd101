/**
 * App annotations ebb is done with, as a pure decision: each is removed once it can no longer mean anything,
 * so it never acts on a later rollout.
 *
 * - `promote` and `abort` (each names an update revision): once the rollout in progress is not one to that
 *   revision (a new template, a revert, or the rollout complete). A later rollout back to the same revision
 *   name (revert, then apply the same template again) is a new rollout: it runs its steps and checks again.
 *   While the abort of the update revision is in force, its annotation stays (removing it retries the abort).
 * - `retry` (names an abort's `abortedAt`): once status no longer records that abort (the retry was served).
 * - `paused-by` (ebb's note that the pause is its own): once `rollingUpdate.paused` is no longer true. A
 *   person who resumed and paused again between two reconciles keeps the note; `ebb rollout pause` removes it.
 *
 * The restart request (`kubectl rollout restart`'s template annotation) is part of the template: it makes a
 * revision of its own and is never cleared.
 */
import type { App } from '../../../api/app.ts';
import { RolloutAnnotation } from '../../../api/rollout-abort.ts';
import type { Stored } from '../../../kube/types.ts';
import type { Action } from '../model/actions.ts';
import { rolloutSettings } from '../model/rollout-settings.ts';

/** The revisions of the rollout a plan works on. */
export interface RolloutNames {
  current: string;
  update: string;
}

/** The annotations of `app` to remove now, for the rollout from `names.current` to `names.update`. */
export function servedAnnotations(app: Stored<App>, names: RolloutNames): string[] {
  const annotations = app.metadata.annotations ?? {};
  const keys: string[] = [];
  const inProgress = (revision: string | undefined) => revision === names.update && names.current !== names.update;
  for (const key of [RolloutAnnotation.promote, RolloutAnnotation.promoteFull, RolloutAnnotation.abort])
    if (annotations[key] !== undefined && !inProgress(annotations[key])) keys.push(key);
  const retry = annotations[RolloutAnnotation.retry];
  if (retry !== undefined && app.status?.abort?.abortedAt !== retry) keys.push(RolloutAnnotation.retry);
  if (annotations[RolloutAnnotation.pausedBy] !== undefined && !rolloutSettings(app).paused) keys.push(RolloutAnnotation.pausedBy);
  return keys;
}

/**
 * The write that removes them (and `refused`: requests answered by a refusal), after the plan's `actions`. A plan that pauses or lifts a pause writes
 * `paused-by` itself, so that note is left to it.
 */
export function clearServed(app: Stored<App>, names: RolloutNames, actions: readonly Action[], refused: readonly string[] = []): Action[] {
  const pausing = actions.some((a) => a.kind === 'pauseRollout');
  const served = servedAnnotations(app, names).filter((k) => !(pausing && k === RolloutAnnotation.pausedBy));
  const keys = [...new Set([...served, ...refused.filter((k) => app.metadata.annotations?.[k] !== undefined)])];
  return keys.length > 0 ? [{ kind: 'clearAnnotations', keys }] : [];
}
