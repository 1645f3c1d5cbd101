/**
 * A pause ebb set for a revision that is no longer the update revision is lifted, as a pure decision. ebb's
 * pauses (a canary `pause: {}` step, an analysis turned inconclusive, the progress deadline, a refused abort)
 * are about one rollout: annotation `paused-by` names its revision. Once the template changes (a new revision,
 * or `ebb rollout undo`), that rollout is over and its pause would only hold the next one, which runs its own
 * steps and checks from the start. A person's pause (no `paused-by`) is never lifted.
 */
import type { App } from '../../../api/app.ts';
import { parsePausedBy, RolloutAnnotation } from '../../../api/rollout-abort.ts';
import type { Stored } from '../../../kube/types.ts';
import { rolloutSettings } from '../model/rollout-settings.ts';
import type { Action } from '../model/actions.ts';

/** The write that lifts ebb's pause for an earlier revision, unless the plan pauses again (`pausing`) for `update`. */
export function stalePauseLift(app: Stored<App>, update: string, pausing: boolean): Action[] {
  if (pausing || !rolloutSettings(app).paused) return [];
  const by = parsePausedBy(app.metadata.annotations?.[RolloutAnnotation.pausedBy]);
  if (by === undefined || by.revision === update) return [];
  const step = app.status?.canary?.step ?? 0;
  return [{ kind: 'pauseRollout', resourceVersion: app.metadata.resourceVersion, step, paused: false, pausedBy: null }];
}
