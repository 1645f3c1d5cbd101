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
import { analysisBook, type AnalysisBook } from './book.ts';

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
