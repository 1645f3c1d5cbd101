/**
 * Pure: what `ebb rollout abort | retry | promote` write, or why they write nothing. Each is a merge patch of
 * the App's annotations (requests the worker acts on; see src/api/rollout-abort.ts) guarded by the App's
 * resourceVersion, so a request is never made about a rollout that changed since it was read. Only promote
 * may also write the spec, and only `rollingUpdate.paused` (lifting a pause ebb set itself, never a person's).
 */
import type { App } from '../../api/app.ts';
import { parsePausedBy, RolloutAnnotation } from '../../api/rollout-abort.ts';
import { rolloutSettings } from '../../workers/app/model/rollout-settings.ts';

export type ControlPlan = { kind: 'patch'; patch: unknown; message: string } | { kind: 'skip'; message: string } | { kind: 'refuse'; message: string };

interface Rollout {
  name: string;
  current: string;
  update: string;
}

/** The rollout under way as the App's status names it, or why there is none to act on. */
function rolloutOf(app: App): Rollout | { refuse: string } {
  const name = app.metadata.name ?? '';
  const status = app.status;
  if ((status?.observedGeneration ?? 0) < (app.metadata.generation ?? 0))
    return { refuse: `app "${name}": generation ${app.metadata.generation ?? 0} is not yet observed by the controller; try again in a moment` };
  const current = status?.currentRevision;
  const update = status?.updateRevision;
  if (!current || !update) return { refuse: `app "${name}" has no revisions yet` };
  if (current === update) return { refuse: `app "${name}" has no rollout in progress: every pod is meant to run revision ${update}` };
  return { name, current, update };
}

const annotationsPatch = (app: App, annotations: Record<string, string | null>, spec?: unknown) => ({
  metadata: { resourceVersion: app.metadata.resourceVersion, annotations },
  ...(spec === undefined ? {} : { spec }),
});

const abortedRevision = (app: App, update: string): boolean =>
  app.status?.abort?.revision === update || app.metadata.annotations?.[RolloutAnnotation.abort] === update;

/**
 * `refusal`: why the worker would refuse this abort (a revision was made between the stable and the update
 * revision, see the worker's abort-refusal), told here before anything is written.
 */
export function planAbort(app: App, refusal?: string): ControlPlan {
  const r = rolloutOf(app);
  if ('refuse' in r) return { kind: 'refuse', message: r.refuse };
  if (abortedRevision(app, r.update)) return { kind: 'skip', message: `rollout of revision ${r.update} already aborted` };
  if (refusal !== undefined) return { kind: 'refuse', message: `not aborted: ${refusal}` };
  return {
    kind: 'patch',
    patch: annotationsPatch(app, { [RolloutAnnotation.abort]: r.update }),
    message: `rollout of revision ${r.update} aborted: pods go back to revision ${r.current} (spec.template unchanged)`,
  };
}

export function planRetry(app: App): ControlPlan {
  const name = app.metadata.name ?? '';
  const abort = app.status?.abort;
  const requested = app.metadata.annotations?.[RolloutAnnotation.abort];
  if (!abort && requested === undefined) return { kind: 'refuse', message: `app "${name}" has no aborted rollout to retry` };
  const annotations: Record<string, string | null> = {
    [RolloutAnnotation.abort]: null,
    [RolloutAnnotation.promote]: null,
    [RolloutAnnotation.promoteFull]: null,
  };
  if (abort) annotations[RolloutAnnotation.retry] = abort.abortedAt;
  const revision = abort?.revision ?? requested ?? '';
  return { kind: 'patch', patch: annotationsPatch(app, annotations), message: `rollout of revision ${revision} retried: it starts again from its first step` };
}

/**
 * The rollout is paused by ebb itself: annotation `paused-by` names the cause (a `pause: {}` step, a check
 * turned inconclusive, `pauseOnProgressDeadline`). Who paused decides, not the Paused condition's reason: a
 * background check's pause has the spec's reason, and a person who paused (or took over ebb's pause with
 * `ebb rollout pause`, which removes the note) keeps the pause.
 */
function pausedByEbb(app: App): boolean {
  return rolloutSettings(app).paused && parsePausedBy(app.metadata.annotations?.[RolloutAnnotation.pausedBy]) !== undefined;
}

/** Why a promote has nothing to do: no canary steps, or none left (a full promote: already asked for). */
function promoteSkip(app: App, r: Rollout, steps: number, step: number, full: boolean): string | undefined {
  if (full)
    return app.metadata.annotations?.[RolloutAnnotation.promoteFull] === r.update ? `rollout of revision ${r.update} already fully promoted` : undefined;
  if (steps === 0) return `app "${r.name}" has no canary steps to skip: the rollout of revision ${r.update} goes on`;
  if (app.metadata.annotations?.[RolloutAnnotation.promote] === r.update || step >= steps)
    return `rollout of revision ${r.update} already past its canary steps`;
  return undefined;
}

function pauseNote(app: App, unpause: boolean): string[] {
  if (unpause) return [`ebb's pause lifted (${parsePausedBy(app.metadata.annotations?.[RolloutAnnotation.pausedBy])?.cause ?? ''})`];
  return rolloutSettings(app).paused ? ['the rollout stays paused (spec): run ebb rollout resume'] : [];
}

function promoteNotes(app: App, step: number, steps: number, full: boolean, unpause: boolean): string[] {
  const skipped = step < steps ? [`canary steps ${step + 1} to ${steps} skipped`] : [];
  return [...skipped, ...(full ? ['its analysis skipped'] : []), ...pauseNote(app, unpause)];
}

/** The promote request (none when nothing is left to skip), and the removal of ebb's pause note with its pause. */
function promoteAnnotations(update: string, skipping: boolean, full: boolean, unpause: boolean): Record<string, string | null> {
  const annotations: Record<string, string | null> = {};
  if (skipping) annotations[RolloutAnnotation.promote] = update;
  if (skipping && full) annotations[RolloutAnnotation.promoteFull] = update;
  if (unpause) annotations[RolloutAnnotation.pausedBy] = null;
  return annotations;
}

/**
 * `promote`: skip the remaining canary steps, and lift a pause ebb set (a step's, an inconclusive check's, the
 * progress deadline's; also with no steps left). `full` (`--full`, as Argo Rollouts' `promote --full`): that,
 * and the revision's analysis too, background checks included; it also applies with no steps left.
 */
export function planPromote(app: App, full = false): ControlPlan {
  const r = rolloutOf(app);
  if ('refuse' in r) return { kind: 'refuse', message: r.refuse };
  if (abortedRevision(app, r.update))
    return { kind: 'refuse', message: `the rollout of revision ${r.update} is aborted: run ebb rollout retry first (then promote to skip its steps)` };
  const { steps, step } = canaryAt(app);
  const skip = promoteSkip(app, r, steps, step, full);
  const unpause = pausedByEbb(app);
  // Nothing left to skip: a pause ebb set is still lifted, as it would be with steps left.
  if (skip && !unpause) return { kind: 'skip', message: skip };
  const notes = skip ? pauseNote(app, unpause) : promoteNotes(app, step, steps, full, unpause);
  return {
    kind: 'patch',
    patch: annotationsPatch(app, promoteAnnotations(r.update, skip === undefined, full, unpause), unpauseSpec(unpause)),
    message: `rollout of revision ${r.update} ${full ? 'fully promoted' : 'promoted'}: ${notes.join('; ')}`,
  };
}

/** The number of canary steps, and the one the rollout stands on. */
function canaryAt(app: App): { steps: number; step: number } {
  const steps = rolloutSettings(app).canarySteps.length;
  return { steps, step: Math.min(app.status?.canary?.step ?? 0, steps) };
}

const unpauseSpec = (unpause: boolean): unknown => (unpause ? { updateStrategy: { rollingUpdate: { paused: false } } } : undefined);
