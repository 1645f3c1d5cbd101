/**
 * What each part of a plan contributes to the App's status (`status/assemble.ts` applies them once, in order,
 * for the planned view and the view as read): the replicas and their conditions, pre-warming, a held rollout,
 * a refused claim expansion, the guards, an abort, the analysis record, and the lifecycle hooks' wait.
 */
import type { AnalysisStatus } from '../../api/analysis.ts';
import type { App } from '../../api/app.ts';
import type { AppStatus } from '../../api/app-status.ts';
import type { Pod, Stored } from '../../kube/types.ts';
import { withRolloutHeldCondition, type RolloutHeldInput } from './admission/rollout-held.ts';
import type { LifecycleContribution } from './lifecycle/report.ts';
import type { PrewarmOutcome } from './model/prewarm-outcome.ts';
import { withPrewarmStatus } from './prewarm/targets.ts';
import { withAbortStatus, type AbortState } from './rollout/abort.ts';
import { analysisHistoryAfter } from './rollout/analysis/history.ts';
import { withGuardStatus, type Guards } from './rollout/guards.ts';
import { withExpansionCondition } from './rollout/volume-growth.ts';
import type { StatusContribution } from './status/assemble.ts';
import { passiveStatus, planStatus, type StatusInput } from './status/planned.ts';

/** The parts of a forward (or aborted) plan that decide its status. */
export interface PlanParts {
  app: Stored<App>;
  input: StatusInput;
  prewarm: PrewarmOutcome;
  rolloutHeld: RolloutHeldInput;
  guards: Guards;
  abort: AbortState;
  analysis: AnalysisStatus | undefined;
  lifecycle: LifecycleContribution | undefined;
}

/**
 * Pre-warm writes are best effort: planned, the status says what they do; as read, it keeps what it said
 * (`status.prewarm` as the App has it, the condition as the replicas part carried it over).
 */
function prewarmPart(app: Stored<App>, outcome: PrewarmOutcome, now: Date): StatusContribution {
  const generation = app.metadata.generation;
  const asRead = app.status?.prewarm;
  return {
    part: 'prewarm',
    apply: (status, view) => (view === 'planned' ? withPrewarmStatus(status, outcome, now, generation) : { ...status, ...(asRead ? { prewarm: asRead } : {}) }),
  };
}

/** Every contribution of a plan that acts on the App. */
export function planContributions(p: PlanParts): StatusContribution[] {
  const { app, input, guards, abort, analysis, lifecycle } = p;
  const { set } = input;
  const now = set.now;
  const generation = app.metadata.generation;
  const history = analysisHistoryAfter(app.status, analysis);
  const parts: StatusContribution[] = [
    { part: 'replicas', apply: (_status, view) => planStatus({ ...input, projectWrites: view === 'planned' }) },
    prewarmPart(app, p.prewarm, now),
    { part: 'rolloutHeld', apply: (status) => withRolloutHeldCondition(status, p.rolloutHeld) },
    { part: 'expansion', apply: (status) => withExpansionCondition(status, set) },
    { part: 'guards', apply: (status) => withGuardStatus(status, guards, now, generation) },
    { part: 'abort', apply: (status) => withAbortStatus(status, abort, now, generation) },
    {
      part: 'analysis',
      apply: (status): AppStatus => ({ ...status, ...(analysis ? { analysis } : {}), ...(history ? { analysisHistory: history } : {}) }),
    },
  ];
  if (lifecycle) parts.push({ part: 'lifecycle', apply: (status) => lifecycle.apply(status) });
  return parts;
}

/** An App being deleted: its counts against the revisions its status names, and its pre-warm entries cleared. */
export function deletingContributions(app: Stored<App>, owned: readonly Stored<Pod>[], prewarm: PrewarmOutcome, now: Date): StatusContribution[] {
  const passive = passiveStatus(app, owned, app.spec.minReadySeconds ?? 0, now);
  const generation = app.metadata.generation;
  return [
    { part: 'replicas', apply: () => passive },
    { part: 'prewarm', apply: (status, view) => (view === 'planned' ? withPrewarmStatus(status, prewarm, now, generation) : status) },
  ];
}
