/**
 * Where the analysis meets the plan (`plan-setup.ts`): the book of one plan over the App's pods at the update
 * revision, and the background checks, which run while a RollingUpdate rollout is under way from the first
 * pod at the update revision on. A background check turning inconclusive pauses the rollout once (the
 * canary's pause write, with an Event); resuming lets the rollout go on and the check measure again, from a
 * fresh count.
 */
import type { App } from '../../../../api/app.ts';
import { EventReason } from '../../../../api/keys.ts';
import type { Pod, Stored } from '../../../../kube/types.ts';
import type { Action } from '../../model/actions.ts';
import { getPodRevision } from '../../pods/predicates.ts';
import type { CanaryOutcome } from '../canary.ts';
import type { Wait } from '../../../types.ts';
import type { AnalysisCheck, Measurement } from '../../../../api/analysis.ts';
import { analysisBook, type AnalysisBook } from './book.ts';
import { intervalMs } from './run.ts';
import { podsPattern } from './prometheus.ts';
import type { QueryVariables } from '../../model/analysis-io.ts';
import { resolveChecks } from './templates.ts';
import type { ResolvedCheck } from '../../model/analysis-io.ts';
import { rolloutSettings } from '../../model/rollout-settings.ts';

/**
 * The checks the App defines, concrete: `resolved` when the reconcile read the templates they name; a check
 * that names a template not read is unresolved (it measures as an error).
 */
function definedChecks(app: Stored<App>, resolved: readonly ResolvedCheck[] | undefined): readonly ResolvedCheck[] {
  return resolved ?? resolveChecks(rolloutSettings(app).analysis?.checks ?? [], new Map());
}

/** The book of one plan: `taken`, the web measurements the plan loop took for it. */
export function bookFor(
  app: Stored<App>,
  owned: readonly Stored<Pod>[],
  plan: {
    revision: string;
    stable: string;
    now: Date;
    restart: boolean;
    taken: ReadonlyMap<string, Measurement> | undefined;
    /** The App's checks made concrete (`Observed.checks`). */
    resolved?: readonly ResolvedCheck[] | undefined;
  },
): AnalysisBook {
  const updated = owned.filter((p) => getPodRevision(p) === plan.revision);
  const vars: QueryVariables = {
    APP: app.metadata.name,
    NAMESPACE: app.metadata.namespace,
    REVISION: plan.revision,
    STABLE_REVISION: plan.stable,
    CANARY_PODS: podsPattern(updated.filter((p) => p.metadata.deletionTimestamp === undefined).map((p) => p.metadata.name)),
  };
  const checks = new Map(definedChecks(app, plan.resolved).map((c) => [c.name, c]));
  return analysisBook({ ...plan, vars, checks, prior: app.status?.analysis, updated });
}

export interface BackgroundInput {
  app: Stored<App>;
  book: AnalysisBook;
  /** The update revision. */
  revision: string;
  /** A RollingUpdate rollout is under way. */
  active: boolean;
  /** Pods run the update revision (the checks start with the first). */
  anyUpdated: boolean;
  canary: CanaryOutcome;
}

/** Advances the background checks: the canary outcome, paused when one turned inconclusive now, and the pause's Event. */
export function backgroundAnalysis(input: BackgroundInput): { canary: CanaryOutcome; actions: Action[] } {
  const { app, book, canary } = input;
  const settings = rolloutSettings(app);
  const checks = settings.analysis?.background ?? [];
  if (!input.active || (!input.anyUpdated && unstartedBackground(app, input.revision).length > 0)) return { canary, actions: [] };
  const paused = settings.paused;
  book.background(checks, !paused);
  const turned = book.turnedInconclusive();
  if (turned.length === 0) return { canary, actions: [] };
  const message = `background analysis ${turned.join(', ')} inconclusive: rollout paused; set spec.updateStrategy.rollingUpdate.paused to false to go on and measure again`;
  const actions: Action[] = [{ kind: 'event', event: { type: 'Warning', reason: EventReason.analysisInconclusive, action: 'Pause', message } }];
  return { canary: { ...canary, pauseSpec: canary.pauseSpec || !paused }, actions };
}

/**
 * Checks about to start wait for pods the watcher may not report again (a canary pod that never turns
 * ready changes little): the plan looks again after the shortest interval of the checks that will start
 * next — those of an analysis step right after the replicas step in force, or background checks not
 * started yet.
 */
/** The checks of the analysis step right after the replicas step in force. */
function nextStepChecks(app: Stored<App>, canary: CanaryOutcome): readonly string[] {
  const steps = rolloutSettings(app).canarySteps;
  const at = canary.status?.step;
  if (at === undefined || steps[at]?.replicas === undefined) return [];
  return steps[at + 1]?.analysis ?? [];
}

/** Background checks not started yet for `revision`. */
function unstartedBackground(app: Stored<App>, revision: string): readonly string[] {
  const record = app.status?.analysis;
  if (record?.revision === revision && record.runs.some((r) => r.step === undefined)) return [];
  return rolloutSettings(app).analysis?.background ?? [];
}

export function startingWait(
  app: Stored<App>,
  revision: string,
  canary: CanaryOutcome,
  active: boolean,
  resolved?: readonly ResolvedCheck[],
): Wait | undefined {
  if (!active) return undefined;
  const defined = definedChecks(app, resolved);
  const names = new Set([...nextStepChecks(app, canary), ...unstartedBackground(app, revision)]);
  const checks: AnalysisCheck[] = defined.filter((c) => names.has(c.name));
  if (checks.length === 0) return undefined;
  return { reason: 'analysis', afterMs: Math.min(...checks.map(intervalMs)) };
}
