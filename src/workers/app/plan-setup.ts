/**
 * What every phase of a plan shares, built once before the first one: the pod set (ordinals, replicas and
 * condemned pods, the two revisions, the App's rollout settings), the canary outcome that sets the
 * partition in force, the guards, and whether the rollout is aborted (then the target is the stable revision).
 */
import type { App } from '../../api/app.ts';
import { ConditionType, EventReason } from '../../api/keys.ts';
import type { Pod, Stored } from '../../kube/types.ts';
import type { Action } from './model/actions.ts';
import type { NeedsInput, Observed } from './model/plan.ts';
import { templateOf } from './revisions/revisions.ts';
import { canaryProgress, type CanaryInput, type CanaryOutcome } from './rollout/canary.ts';
import { rolloutSettings, type RolloutSettings } from './model/rollout-settings.ts';
import { priorityReached } from './rollout/update-order.ts';
import { getPodRevision, isRunningAndAvailable, isTerminating } from './pods/predicates.ts';
import { floorForTop, isMonotonic, ordinalRange, type PodSet, splitPods } from './pods/pod-set.ts';
import type { ResolvedRevisions } from './revisions/revisions.ts';
import { isTrueFor } from '../shared/conditions.ts';
import { planGuards, type Guards } from './rollout/guards.ts';
import { abortActions, abortState, type AbortState } from './rollout/abort.ts';
import { NEEDS_REVISIONS, refusedRequestEvent, startable, triggered, type Refused } from './rollout/abort-refusal.ts';
import { clearServed } from './rollout/requests.ts';
import { stalePauseLift } from './rollout/stale-pause.ts';
import { PauseCause, pausedByValue, RolloutAnnotation } from '../../api/rollout-abort.ts';
import type { CanaryStep } from '../../api/update-strategy.ts';
import type { AnalysisStatus } from '../../api/analysis.ts';
import { backgroundAnalysis, bookFor, startingWait, type BackgroundInput } from './rollout/analysis/setup.ts';
import type { AnalysisBook, StepVerdict } from './rollout/analysis/book.ts';

/** Whether the `target` highest-ordinal replicas (not below the partition) run the update revision and are available. */
function reachedFor(set: Omit<PodSet, 'partition'>, partition: number): (target: number) => boolean {
  if (set.rollout.priorityStrategy) return priorityReached(set, set.minReadySeconds, set.now, partition);
  return (target) => {
    const floor = Math.max(partition, floorForTop(set, target));
    for (const ord of set.ordinals) {
      if (ord < floor) continue;
      const pod = set.replicas.get(ord);
      if (!pod || isTerminating(pod) || getPodRevision(pod) !== set.update.metadata.name || !isRunningAndAvailable(pod, set.minReadySeconds, set.now))
        return false;
    }
    return true;
  };
}

/** Whether `target` replicas (not below the partition) run the update revision, available or not. */
function updatedFor(set: Omit<PodSet, 'partition'>, partition: number): (target: number) => boolean {
  return (target) => {
    let n = 0;
    for (const [ord, pod] of set.replicas) if (ord >= partition && !isTerminating(pod) && getPodRevision(pod) === set.update.metadata.name) n++;
    return n >= target;
  };
}

interface CanaryOptions {
  /** Start the steps again (an abort was retried in this plan). */
  restart: boolean;
  /** `ebb rollout promote` named the update revision: its remaining steps are skipped. */
  promoted: boolean;
  /** Advances the checks of an analysis step. */
  analyze?: CanaryInput['analyze'];
}

function canaryFor(app: Stored<App>, base: Omit<PodSet, 'partition'>, opts: CanaryOptions): CanaryOutcome {
  return canaryProgress({
    steps: base.rollout.canarySteps,
    replicas: base.ordinals.length,
    active: base.current.metadata.name !== base.update.metadata.name,
    sameRevision: app.status?.updateRevision === base.update.metadata.name && !opts.restart,
    status: app.status?.canary,
    specPaused: base.rollout.paused,
    now: base.now,
    promoted: opts.promoted,
    analyze: opts.analyze,
    updated: updatedFor(base, base.rollout.partition),
    reached: reachedFor(base, base.rollout.partition),
  });
}

/** What a plan's rollout is set up from. */
interface SetupInput {
  app: Stored<App>;
  owned: readonly Stored<Pod>[];
  observed: Observed;
  revs: ResolvedRevisions;
  now: Date;
}

/** The pod set of one plan without the partition in force (the canary or an abort decides it). */
function baseSetFor({ app, owned, observed, revs, now }: SetupInput): Omit<PodSet, 'partition'> {
  const { start, end, ordinals } = ordinalRange(app);
  const { replicas, condemned } = splitPods(app, owned);
  const generation = app.metadata.generation;
  const rollout: RolloutSettings = rolloutSettings(app);
  return {
    app,
    now,
    rollout,
    minReadySeconds: app.spec.minReadySeconds ?? 0,
    monotonic: isMonotonic(app),
    start,
    end,
    ordinals,
    replicas,
    condemned,
    claims: observed.claims && new Map(observed.claims.map((c) => [c.metadata.name, c])),
    current: revs.current,
    update: revs.update,
    createBlocked:
      isTrueFor(app.status?.conditions, ConditionType.invalidSpec, generation) && isTrueFor(app.status?.conditions, ConditionType.failedCreatePod, generation),
  };
}

/** The pod set of one plan, with the partition in force: the spec's, raised while a canary step holds pods back. */
function podSetFor(input: SetupInput, opts: CanaryOptions): { set: PodSet; canary: CanaryOutcome } {
  const base = baseSetFor(input);
  const canary = canaryFor(input.app, base, opts);
  const rollout = base.rollout;
  const partition = canary.target === undefined ? rollout.partition : Math.max(rollout.partition, floorForTop(base, canary.target));
  return { set: { ...base, partition }, canary };
}

/**
 * A canary pause entered now: the spec write that pauses the rollout, naming `cause` (a `pause: {}` step, or
 * an analysis turned inconclusive) in the same write, and its Event.
 */
export function canaryActions(app: Stored<App>, canary: CanaryOutcome, cause: { promoted: boolean; pausedBy: string }): Action[] {
  const promoted = cause.promoted;
  const actions: Action[] = [];
  const step = canary.status?.step ?? 0;
  const before = app.status?.canary?.step ?? 0;
  if (promoted && before < step && app.status?.updateRevision !== undefined) {
    const message = `promoted: canary steps ${before + 1} to ${step} skipped`;
    actions.push({ kind: 'event', event: { type: 'Normal', reason: EventReason.rolloutPromoted, action: 'Promote', message } });
  }
  if (canary.pauseSpec) actions.push({ kind: 'pauseRollout', resourceVersion: app.metadata.resourceVersion, step, pausedBy: cause.pausedBy });
  if (canary.enteredManualPause) {
    const message = `canary step ${step + 1}: rollout paused; set spec.updateStrategy.rollingUpdate.paused to false to continue`;
    actions.push({ kind: 'event', event: { type: 'Normal', reason: EventReason.canaryPaused, action: 'Pause', message } });
  }
  return actions;
}

/** Why the canary pauses the rollout in this plan: its `pause: {}` step, else an analysis (a step's or a background one). */
function pauseCauseOf(steps: readonly CanaryStep[], stepped: CanaryOutcome): PauseCause {
  const step = steps[stepped.status?.step ?? 0];
  return stepped.pauseSpec && step?.pause !== undefined ? PauseCause.canaryStep : PauseCause.analysisInconclusive;
}

/** The rollout a plan works on: the pod set with its target revision, the canary, the guards and the abort. */
export interface RolloutSetup {
  set: PodSet;
  canary: CanaryOutcome;
  guards: Guards;
  abort: AbortState;
  /** What status.analysis says after this plan. */
  analysis: AnalysisStatus | undefined;
  /** The canary's, the guards' and the abort's writes, to run before any pod is touched. */
  actions: Action[];
}

/**
 * An aborted rollout: the target revision is the stable one, so every phase moves pods back to it. Canary
 * progress stays as it was (a retry starts the steps again), no deadline runs, nothing is pre-warmed for the
 * aborted revision. `earlier`: Events of the plan that found the abort (the deadline's).
 */
function abortedSetup(input: SetupInput, state: AbortState, earlier: Action[], analysis: AnalysisStatus | undefined): RolloutSetup | NeedsInput {
  const { app, revs } = input;
  const base = baseSetFor(input);
  const abort = state.abort;
  // The stable revision's template is what pods go back to: a plan made without reading it cannot be made.
  if (!abort || templateOf(revs.current) === undefined) return { needs: 'revisions' };
  const set: PodSet = { ...base, update: revs.current, partition: base.start, aborted: { from: revs.update, abort } };
  const frozen = app.status?.updateRevision === revs.update.metadata.name ? app.status?.canary : { step: 0 };
  const canary: CanaryOutcome = {
    status: base.rollout.canarySteps.length > 0 ? frozen : undefined,
    target: undefined,
    enteredManualPause: false,
    pauseSpec: false,
  };
  const guards = planGuards(set, { active: false, canary });
  const own = abortActions(app, state, revs.current.metadata.name);
  const actions = [...earlier, ...own.actions, ...guards.actions];
  const names = { current: revs.current.metadata.name, update: revs.update.metadata.name };
  return { set, canary, guards, abort: state, analysis, actions: [...actions, ...clearServed(app, names, actions)] };
}

/** Promoted fully (`ebb rollout promote --full`): the revision's analysis is skipped too, nothing is measured. */
const fullyPromoted = (app: Stored<App>, update: string): boolean => app.metadata.annotations?.[RolloutAnnotation.promoteFull] === update;

/** How a canary step's checks are judged: by the book, or passed without measuring under a full promote. */
const stepAnalysis =
  (book: AnalysisBook, full: boolean) =>
  (step: number, checks: readonly string[], early?: boolean, resumed?: boolean): StepVerdict =>
    full ? 'passed' : book.step(step, checks, early, resumed);

/** The background checks advanced, or left alone under a full promote. */
const backgroundFor = (full: boolean, input: BackgroundInput): ReturnType<typeof backgroundAnalysis> =>
  full ? { canary: input.canary, actions: [] } : backgroundAnalysis(input);

/** status.analysis after the plan: the book's, else as read while it belongs to the update revision (another's is left, and summed up in the history). */
const recordAfter = (app: Stored<App>, book: AnalysisBook, update: string): AnalysisStatus | undefined =>
  book.status() ?? (app.status?.analysis?.revision === update ? app.status.analysis : undefined);

export function rolloutFor(app: Stored<App>, owned: readonly Stored<Pod>[], observed: Observed, revs: ResolvedRevisions, now: Date): RolloutSetup | NeedsInput {
  const input: SetupInput = { app, owned, observed, revs, now };
  const update = revs.update.metadata.name;
  const requested = abortState(app, { current: revs.current.metadata.name, update }, now);
  if (!requested.abort) return forwardSetup(input, requested, undefined);
  const start = requested.started ? startable(revs) : undefined;
  if (start === NEEDS_REVISIONS) return start;
  // Aborted already (the analysis record stays as it was when the rollout was aborted), or starting now.
  if (typeof start !== 'string') return abortedSetup(input, requested, [], app.status?.analysis);
  const state: AbortState = { abort: undefined, started: false, ended: requested.ended, refused: `abort of revision ${update} refused: ${start}` };
  return forwardSetup(input, state, { state, actions: [refusedRequestEvent(update, start)], keys: [RolloutAnnotation.abort] });
}

/** The canary steps and their checks advanced for this plan. */
function advanced(input: SetupInput, requestedState: AbortState) {
  const { app, owned, observed, revs, now } = input;
  const names = { current: revs.current.metadata.name, update: revs.update.metadata.name };
  const promoted = app.metadata.annotations?.[RolloutAnnotation.promote] === names.update;
  const full = promoted && fullyPromoted(app, names.update);
  const restart = requestedState.ended === 'retried';
  // The analysis: a step's checks measure as the canary reaches the step, the background ones after it.
  const book = bookFor(app, owned, { revision: names.update, stable: names.current, now, restart, taken: observed.measurements, resolved: observed.checks });
  const stepped = podSetFor(input, { restart, promoted, analyze: stepAnalysis(book, full) });
  const set = stepped.set;
  const active = names.current !== names.update;
  const anyUpdated = owned.some((p) => getPodRevision(p) === names.update);
  const background = backgroundFor(full, { app, book, revision: names.update, active: active && set.rollout.rolling, anyUpdated, canary: stepped.canary });
  return { names, promoted, full, book, stepped, set, active, background };
}

/** The rollout going forward (or held by a refused abort's pause). */
function forwardSetup(input: SetupInput, requestedState: AbortState, refusedRequest: Refused | undefined): RolloutSetup | NeedsInput {
  const { app } = input;
  const adv = advanced(input, requestedState);
  const { book, set, active, background } = adv;
  // Web checks due: the plan loop measures them and plans again with the measurements.
  const measure = book.requests();
  if (measure.length > 0) return { needs: 'measurements', measure };
  // Guards before any pod is touched: the progress deadline may pause, or abort, the rollout for this very plan.
  const guards = planGuards(set, { active, canary: background.canary });
  // What aborts the rollout by itself, found in this plan: the deadline, and a failed analysis check.
  const triggers = [guards.deadline.rollback, book.failure()].filter((t) => t !== undefined);
  const analysis = recordAfter(app, book, adv.names.update);
  const found = refusedRequest ?? (triggers.length > 0 ? triggered(input, requestedState, triggers) : undefined);
  if (found !== undefined && 'needs' in found) return found;
  if (found !== undefined && 'abort' in found)
    return abortedSetup(input, found, [...guards.actions.filter((a) => a.kind === 'event'), ...book.events()], analysis);
  return forwardPlan(input, { ...adv, guards, analysis }, found?.state ?? requestedState, found);
}

/** The forward plan's rollout: a refused abort pauses it instead, so the update revision spreads no further. */
function forwardPlan(
  input: SetupInput,
  adv: ReturnType<typeof advanced> & { guards: Guards; analysis: AnalysisStatus | undefined },
  abort: AbortState,
  refused: Refused | undefined,
): RolloutSetup {
  const { app } = input;
  const { names, promoted, full, book, stepped, set, active, background, analysis } = adv;
  const canary = refused ? { ...background.canary, pauseSpec: background.canary.pauseSpec || !set.rollout.paused } : background.canary;
  const held = refused ? planGuards(set, { active, canary }) : adv.guards;
  for (const wait of [book.wait(), startingWait(app, names.update, canary, active && set.rollout.rolling && !full, input.observed.checks)])
    if (wait) held.waits.push(wait);
  const cause = refused ? PauseCause.abortRefused : pauseCauseOf(set.rollout.canarySteps, stepped.canary);
  const pausing = canaryActions(app, canary, { promoted, pausedBy: pausedByValue(cause, names.update) });
  const acting = [...abortActions(app, abort, names.current).actions, ...(refused?.actions ?? []), ...book.events(), ...background.actions];
  const lift = stalePauseLift(
    app,
    names.update,
    [...pausing, ...held.actions].some((a) => a.kind === 'pauseRollout'),
  );
  const actions = [...acting, ...pausing, ...held.actions, ...lift];
  return { set, canary, guards: held, abort, analysis, actions: [...actions, ...clearServed(app, names, actions, refused?.keys)] };
}
