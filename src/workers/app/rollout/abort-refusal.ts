/**
 * An abort that would undo more than the rollout in progress is refused, as a pure decision.
 *
 * An abort takes pods back to the stable revision (`status.currentRevision`). When another revision was made
 * between the stable one and the update revision (the template changed while a rollout was under way, or a
 * partition stage moved the pods above it to a revision before this one), going back to the stable revision
 * would also undo that revision, which no one asked for; going back one revision would move pods that never
 * ran it onto a revision no analysis judged. ebb does neither: it does not abort, and says how to choose.
 * - A person's request (annotation `rollout.apps.ebb.dev/abort`) is answered with a Warning Event and the
 *   condition Aborted False (reason AbortRefused), and the annotation is removed.
 * - A failure the worker found (a failed analysis, the progress deadline with rollbackOnProgressDeadline)
 *   pauses the rollout instead (ebb's own pause, noted in `paused-by`, which a later abort lifts), so the
 *   update revision spreads no further while a person chooses with `ebb rollout undo --to-revision N`.
 * Revision numbers tell: the stable and update revisions' numbers are consecutive unless a revision was
 * made between them (a revision made again is renumbered past every other, so a revert never counts).
 */
import type { App } from '../../../api/app.ts';
import { EventReason } from '../../../api/keys.ts';
import { parsePausedBy, PauseCause, RolloutAnnotation } from '../../../api/rollout-abort.ts';
import type { Stored } from '../../../kube/types.ts';
import { rolloutSettings } from '../model/rollout-settings.ts';
import type { Action } from '../model/actions.ts';
import { templateOf, type ResolvedRevisions } from '../revisions/revisions.ts';
import { abortState, type AbortState, type AbortTrigger } from './abort.ts';

/** Why an abort from `revs.current` back past `revs.update` is refused, or undefined when it may go ahead. */
export function abortRefusal(revs: Pick<ResolvedRevisions, 'owned' | 'current' | 'update'>): string | undefined {
  const from = revs.current.revision;
  const to = revs.update.revision;
  if (to - from <= 1) return undefined;
  const between = revs.owned.filter((r) => r.revision > from && r.revision < to).map((r) => `${r.metadata.name} (${r.revision})`);
  const made = between.length > 0 ? `revision${between.length === 1 ? '' : 's'} ${between.join(', ')}` : `${to - from - 1} revision(s)`;
  return (
    `going back to the stable revision ${revs.current.metadata.name} (${from}) would also undo ${made} made since; ` +
    `choose the revision to go back to with ebb rollout undo --to-revision N`
  );
}

/** The Event of a person's abort request refused (the plan also removes the request: `clearServed`). */
export function refusedRequestEvent(update: string, refusal: string): Action {
  const message = `abort of revision ${update} refused: ${refusal}`;
  return { kind: 'event', event: { type: 'Warning', reason: EventReason.abortRefused, action: 'Abort', message } };
}

/** ebb paused the rollout to `update` already for a refused abort (then the refusal is not announced again). */
function pausedForRefusal(app: Stored<App>, update: string): boolean {
  const by = parsePausedBy(app.metadata.annotations?.[RolloutAnnotation.pausedBy]);
  return rolloutSettings(app).paused && by?.cause === PauseCause.abortRefused && by.revision === update;
}

/** The Event of a failure that would have aborted the rollout to `update` and paused it instead. */
function refusedTriggerEvent(update: string, why: string, refusal: string): Action {
  const message = `rollout of revision ${update} not aborted (${why}): ${refusal}; the rollout is paused`;
  return { kind: 'event', event: { type: 'Warning', reason: EventReason.abortRefused, action: 'Pause', message } };
}

/** Reading the revisions comes first: their numbers decide whether an abort starting now may go ahead. */
export const NEEDS_REVISIONS = { needs: 'revisions' } as const;

/** Whether an abort starting now may go ahead (undefined), is refused (why), or needs the revisions read. */
export function startable(revs: Pick<ResolvedRevisions, 'owned' | 'current' | 'update'>): string | typeof NEEDS_REVISIONS | undefined {
  return templateOf(revs.current) === undefined ? NEEDS_REVISIONS : abortRefusal(revs);
}

/** A refused abort: the state recording why, and the writes that answer it (the plan also pauses the rollout). */
export interface Refused {
  state: AbortState;
  actions: Action[];
  /** Request annotations to remove. */
  keys: string[];
}

/**
 * A failure the worker found in this plan (the deadline, a failed check) aborts the rollout, or, refused,
 * pauses it: announced once, while ebb has not paused it for that yet.
 */
export function triggered(
  input: { app: Stored<App>; revs: Pick<ResolvedRevisions, 'owned' | 'current' | 'update'>; now: Date },
  requested: AbortState,
  triggers: readonly AbortTrigger[],
): AbortState | Refused | typeof NEEDS_REVISIONS | undefined {
  const { app, revs, now } = input;
  const update = revs.update.metadata.name;
  const state = abortState(app, { current: revs.current.metadata.name, update }, now, triggers);
  if (!state.abort) return undefined;
  const start = startable(revs);
  if (start === NEEDS_REVISIONS) return start;
  if (typeof start !== 'string') return state;
  const refused: AbortState = { ...requested, refused: `rollout of revision ${update} not aborted (${state.abort.reason}): ${start}` };
  return { state: refused, actions: pausedForRefusal(app, update) ? [] : [refusedTriggerEvent(update, state.abort.reason, start)], keys: [] };
}
