/**
 * Pure: what `ebb rollout abort | retry | promote` write, or why they write nothing. Each is a merge patch of
 * the App's annotations (requests the worker acts on; see src/api/rollout-abort.ts) guarded by the App's
 * resourceVersion, so a request is never made about a rollout that changed since it was read. Only promote
 * may also write the spec, and only `rollingUpdate.paused` (lifting a pause a canary step set).
 */
import type { App } from '../../api/app.ts';
import { ConditionType, Reason } from '../../api/keys.ts';
import { RolloutAnnotation } from '../../api/rollout-abort.ts';

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

export function planAbort(app: App): ControlPlan {
  const r = rolloutOf(app);
  if ('refuse' in r) return { kind: 'refuse', message: r.refuse };
  if (abortedRevision(app, r.update)) return { kind: 'skip', message: `rollout of revision ${r.update} already aborted` };
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

/** The rollout is paused by a canary `pause: {}` step (not by a person). */
function pausedByStep(app: App): boolean {
  const paused = app.status?.conditions?.find((c) => c.type === ConditionType.paused);
  return app.spec.updateStrategy?.rollingUpdate?.paused === true && paused?.status === 'True' && paused.reason === Reason.canaryPause;
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
  if (unpause) return ['the pause of the step lifted'];
  return app.spec.updateStrategy?.rollingUpdate?.paused === true ? ['the rollout stays paused (spec): run ebb rollout resume'] : [];
}

function promoteNotes(app: App, step: number, steps: number, full: boolean, unpause: boolean): string[] {
  const skipped = step < steps ? [`canary steps ${step + 1} to ${steps} skipped`] : [];
  return [...skipped, ...(full ? ['its analysis skipped'] : []), ...pauseNote(app, unpause)];
}

/**
 * `promote`: skip the remaining canary steps (and lift the pause of the step it stands on). `full` (`--full`,
 * as Argo Rollouts' `promote --full`): that, and the revision's analysis too, background checks included; it
 * also applies with no steps left.
 */
export function planPromote(app: App, full = false): ControlPlan {
  const r = rolloutOf(app);
  if ('refuse' in r) return { kind: 'refuse', message: r.refuse };
  if (abortedRevision(app, r.update))
    return { kind: 'refuse', message: `the rollout of revision ${r.update} is aborted: run ebb rollout retry first (then promote to skip its steps)` };
  const steps = app.spec.updateStrategy?.rollingUpdate?.canary?.steps ?? [];
  const step = Math.min(app.status?.canary?.step ?? 0, steps.length);
  const skip = promoteSkip(app, r, steps.length, step, full);
  if (skip) return { kind: 'skip', message: skip };
  const unpause = pausedByStep(app);
  const spec = unpause ? { updateStrategy: { rollingUpdate: { paused: false } } } : undefined;
  const notes = promoteNotes(app, step, steps.length, full, unpause);
  const annotations: Record<string, string> = { [RolloutAnnotation.promote]: r.update, ...(full ? { [RolloutAnnotation.promoteFull]: r.update } : {}) };
  return {
    kind: 'patch',
    patch: annotationsPatch(app, annotations, spec),
    message: `rollout of revision ${r.update} ${full ? 'fully promoted' : 'promoted'}: ${notes.join('; ')}`,
  };
}
