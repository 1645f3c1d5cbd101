/**
 * Where the analysis meets the plan (`plan-setup.ts`): the book of one plan over the App's pods at the update
 * revision, and the background checks, which run while a RollingUpdate rollout is under way from the first
 * pod at the update revision on. A background check turning inconclusive pauses the rollout once (the
 * canary's pause write, with an Event); resuming lets the rollout go on, that check staying inconclusive.
 */
import type { App } from '../../../../api/app.ts';
import { EventReason } from '../../../../api/keys.ts';
import type { Pod, Stored } from '../../../../kube/types.ts';
import type { Action } from '../../actions.ts';
import { getPodRevision } from '../../pods/predicates.ts';
import type { CanaryOutcome } from '../canary.ts';
import type { Wait } from '../../../types.ts';
import type { AnalysisCheck } from '../../../../api/analysis.ts';
import { analysisBook, type AnalysisBook } from './book.ts';
import { intervalMs } from './run.ts';

export function bookFor(app: Stored<App>, owned: readonly Stored<Pod>[], revision: string, now: Date, restart: boolean): AnalysisBook {
  const updated = owned.filter((p) => getPodRevision(p) === revision);
  return analysisBook({ revision, prior: app.status?.analysis, restart, updated, now });
}

export interface BackgroundInput {
  app: Stored<App>;
  book: AnalysisBook;
  /** A RollingUpdate rollout is under way. */
  active: boolean;
  /** Pods run the update revision (the checks start with the first). */
  anyUpdated: boolean;
  canary: CanaryOutcome;
}

/** Advances the background checks: the canary outcome, paused when one turned inconclusive now, and the pause's Event. */
export function backgroundAnalysis(input: BackgroundInput): { canary: CanaryOutcome; actions: Action[] } {
  const { app, book, canary } = input;
  const checks = app.spec.updateStrategy?.rollingUpdate?.analysis ?? [];
  const started = (app.status?.analysis?.runs ?? []).some((r) => r.step === undefined);
  if (checks.length === 0 || !input.active || (!input.anyUpdated && !started)) return { canary, actions: [] };
  book.background(checks);
  const turned = book.turnedInconclusive();
  if (turned.length === 0) return { canary, actions: [] };
  const paused = app.spec.updateStrategy?.rollingUpdate?.paused === true;
  const message = `background analysis ${turned.join(', ')} inconclusive: rollout paused; set spec.updateStrategy.rollingUpdate.paused to false to go on`;
  const actions: Action[] = [{ kind: 'event', event: { type: 'Warning', reason: EventReason.analysisInconclusive, action: 'Pause', message } }];
  return { canary: { ...canary, pauseSpec: canary.pauseSpec || !paused }, actions };
}

/**
 * Checks about to start wait for pods the watcher may not report again (a canary pod that never turns
 * ready changes little): the plan looks again after the shortest interval of the checks that will start
 * next — those of an analysis step right after the replicas step in force, or background checks not
 * started yet.
 */
export function startingWait(app: Stored<App>, revision: string, canary: CanaryOutcome, active: boolean): Wait | undefined {
  if (!active) return undefined;
  const steps = app.spec.updateStrategy?.rollingUpdate?.canary?.steps ?? [];
  const checks: AnalysisCheck[] = [];
  const at = canary.status?.step;
  if (at !== undefined && steps[at]?.replicas !== undefined) checks.push(...(steps[at + 1]?.analysis ?? []));
  const background = app.spec.updateStrategy?.rollingUpdate?.analysis ?? [];
  const record = app.status?.analysis;
  const started = record?.revision === revision && record.runs.some((r) => r.step === undefined);
  if (!started) checks.push(...background);
  if (checks.length === 0) return undefined;
  return { reason: 'analysis', afterMs: Math.min(...checks.map(intervalMs)) };
}
