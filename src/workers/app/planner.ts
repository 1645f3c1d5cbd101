/**
 * `plan(observed, now)`: the App reconcile as a pure function from what was read (the App, the pods its
 * selector matches, its ControllerRevisions and claims) to the writes to make, the status to record, and
 * when to look again; or, when an input it needs was not read, `NeedsInput` naming it (`plan-loop.ts` reads
 * it and plans again). The phases and why each comes where it does: `plan()` below, and docs/architecture.md. Follows the upstream StatefulSet controller (stateful_set_control.go): revisions
 * first, then replicas ascending, then condemned pods descending, then the rolling update. In-place updates
 * already under way get their next step even when the rest is blocked (OrderedReady waits on those very pods);
 * so do pods in a lifecycle state, and the lifecycle hooks put their writes in front of deletes and in-place updates.
 */
import type { App } from '../../api/app.ts';
import { withAppSpecDefaults } from '../../api/defaults.ts';
import type { Wait } from '../types.ts';
import type { CanaryOutcome } from './rollout/canary.ts';
import { adoptPods } from './ownership/adopt.ts';
import { rolloutCompleteEvent } from './events/app-events.ts';
import type { Pod, Stored } from '../../kube/types.ts';
import { invalidSpecStatus, type StatusInput } from './status/planned.ts';
import { statusViews } from './status/assemble.ts';
import { deletingContributions, planContributions, type PlanParts } from './plan-status.ts';
import { lifecycleReport } from './lifecycle/report.ts';
import type { Accumulator } from './pods/pod-set.ts';
import { revisionsOf, withHistory } from './revisions/history.ts';
import { planCondemned, planReplicas } from './scaling/scale-plan.ts';
import { availabilityWait } from './status/replicas.ts';
import { planInFlight, updateContext } from './rollout/inplace-plan.ts';
import { gateLifecycle, planPrepared } from './lifecycle/plan.ts';
import { prewarmStep } from './prewarm/targets.ts';
import { planFallbackReport, planRollingUpdate } from './rollout/update-plan.ts';
import { specProblems } from './spec/validate.ts';
import { planSpecifiedDeletes } from './rollout/specified-delete.ts';
import { deferredWorkEvent } from './status/deferred-work.ts';
import { grantedOutcome, withPrewarmWait } from './prewarm/grant.ts';
import { type Hold, holdRefused, recreatesPods } from './admission/replacement.ts';
import { rolloutHeldEvent, type RolloutHeldInput } from './admission/rollout-held.ts';
import { rolloutFor } from './plan-setup.ts';
import { needsInput, type Observed, type Plan, type PlanOptions, type PlanResult } from './model/plan.ts';

function earliest(waits: readonly (Wait | undefined)[]): Wait | undefined {
  let best: Wait | undefined;
  for (const w of waits) if (w && (!best || w.afterMs < best.afterMs)) best = w;
  return best;
}

/** A spec change may change the retention policy: the claims' owners are brought in line with it then. */
function claimsNeededForSpec(app: Stored<App>, observed: Observed): boolean {
  return observed.claims === undefined && (app.spec.volumeClaimTemplates ?? []).length > 0 && app.status?.observedGeneration !== app.metadata.generation;
}

/** The claims are needed by a step of the plan or by a spec change. */
function claimsNeeded(acc: Accumulator, app: Stored<App>, observed: Observed): boolean {
  return acc.needsClaims === true || claimsNeededForSpec(app, observed);
}

function invalidPlan(app: Stored<App>, pods: readonly Stored<Pod>[], problems: readonly string[], now: Date): Plan {
  const owned = pods.filter((p) => p.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === app.metadata.uid));
  const invalid = invalidSpecStatus(app, owned, problems, now);
  return { actions: invalid.actions, status: invalid.status };
}

/** The status (as planned and as read), the rollout's end Event, pre-warming, a hold, the lifecycle hooks' wait, and the earliest wait. */
function finishPlan(
  app: Stored<App>,
  input: StatusInput,
  acc: Accumulator,
  outcomes: Omit<PlanParts, 'app' | 'input' | 'rolloutHeld' | 'lifecycle'> & { canary: CanaryOutcome; budgetWait: Wait | undefined; hold: Hold | undefined },
): Plan {
  const { canary, prewarm } = outcomes;
  const set = input.set;
  const rolloutHeld: RolloutHeldInput = {
    hold: outcomes.hold,
    recreates: recreatesPods(input.actions),
    previous: app.status?.conditions,
    generation: app.metadata.generation,
    now: set.now,
  };
  const lifecycle = lifecycleReport(app, input.owned, set.now);
  const { status, statusAsRead } = statusViews(planContributions({ ...outcomes, app, input, rolloutHeld, lifecycle }));
  const heldRollout = rolloutHeldEvent(rolloutHeld);
  if (heldRollout) acc.actions.push({ kind: 'event', event: heldRollout });
  const waiting = deferredWorkEvent(app.status?.conditions, status.conditions);
  if (waiting) acc.actions.push({ kind: 'event', event: waiting });
  const complete = rolloutCompleteEvent(app, status);
  if (complete) acc.actions.push({ kind: 'event', event: complete });
  acc.actions.push(...prewarm.actions);
  if (lifecycle?.event) acc.actions.push({ kind: 'event', event: lifecycle.event });
  const canaryWait: Wait | undefined = canary.waitMs !== undefined ? { reason: 'canary-pause', afterMs: canary.waitMs } : undefined;
  return {
    actions: acc.actions,
    status,
    statusAsRead,
    wait: earliest([...acc.waits, canaryWait, availabilityWait(input.owned, set.minReadySeconds, set.now), outcomes.budgetWait, lifecycle?.wait]),
    prewarm,
  };
}

/** An App being deleted: status only, and its pre-warm entries cleared. */
function deletingPlan(app: Stored<App>, owned: readonly Stored<Pod>[], observed: Observed, now: Date): PlanResult {
  const step = prewarmStep(app, undefined, observed.imageLists);
  if (needsInput(step)) return step;
  const { prewarm, wait } = grantedOutcome(step, observed.pullGrant);
  return withPrewarmWait({ actions: prewarm.actions, ...statusViews(deletingContributions(app, owned, prewarm, now)), wait, prewarm }, now);
}

/**
 * The phases, in order. Each writes into one accumulator (actions and waits); a phase that finds an input
 * missing returns `NeedsInput` and the caller (`plan-loop.ts`) reads it and plans again.
 */
export function plan(observed: Observed, now: Date, options: PlanOptions = {}): PlanResult {
  const app: Stored<App> = { ...observed.app, spec: withAppSpecDefaults(observed.app.spec) };
  // Ownership first: every later phase counts only the pods the App controls (orphans adopted, strays left out).
  const adopted = adoptPods(app, observed.pods);
  // An invalid spec is only reported: no phase below may act on a spec the App's schema should have refused.
  const problems = specProblems(app);
  if (problems.length > 0) return invalidPlan(app, observed.pods, problems, now);
  // An App being deleted gets its status and its pre-warm entries cleared; the garbage collector does the rest.
  if (app.metadata.deletionTimestamp) return deletingPlan(app, adopted.owned, observed, now);

  // Revisions before pods (as upstream): every pod is judged against the current and the update revision.
  const revs = revisionsOf(app, observed);
  if (!revs) return { needs: 'revisions' };
  // The shared context: the pod set with the rollout settings resolved once, the canary's partition, the guards
  // (the progress deadline may pause or abort the rollout for this very plan), and the target revision: the
  // update revision, or the stable one while the rollout is aborted (`rollout/abort.ts`).
  const rollout = rolloutFor(app, adopted.owned, observed, revs, now);
  if (needsInput(rollout)) return rollout;
  const { set, canary, guards, abort, analysis, actions } = rollout;
  const acc: Accumulator = { actions: [...adopted.actions, ...revs.actions, ...actions], waits: guards.waits };
  // Scaling: missing replicas ascending, then condemned pods descending; `blocked` (OrderedReady waiting on a
  // pod) stops the rolling update below, as upstream.
  const blocked = planReplicas(set, acc) || planCondemned(set, acc);
  const paused = guards.paused;
  const updates = updateContext(set, revs.owned);
  // Updates under way go on even when blocked or paused: those pods are unavailable already, and OrderedReady
  // waits on them. So do pods a lifecycle hook has prepared.
  const inFlight = planInFlight(updates, acc, paused);
  planPrepared(updates, acc, paused, inFlight);
  // Pods labelled for deletion, then the rolling update proper (while blocked, only the pod OrderedReady waits
  // on, when it is unavailable and outdated: a revert heals), then what fell back.
  const specified = planSpecifiedDeletes(updates, acc, paused, blocked);
  planRollingUpdate(updates, acc, { paused, inFlight, specified, blocked });
  planFallbackReport(updates, acc);
  // Lifecycle hooks put their writes in front of the deletes and in-place updates planned above.
  gateLifecycle(set, acc);
  // Only now is it known whether a phase needed the claims: nothing is decided on their absence.
  if (claimsNeeded(acc, app, observed)) return { needs: 'claims' };
  // Deletes whose replacements the dry run refused are dropped, after every phase that may add one.
  const { actions: admitted, hold } = holdRefused(acc.actions, observed.refused);
  acc.actions = admitted;
  // Pre-warming looks at the final actions (which pods are about to be replaced) to choose its nodes.
  const step = prewarmStep(app, { set, paused, canary, actions: acc.actions }, observed.imageLists, observed.nodes, options.prewarm);
  if (needsInput(step)) return step;
  // Only the requests the pull budget granted, once the plan loop asked it (`prewarm/grant.ts`).
  const { prewarm, wait: budgetWait } = grantedOutcome(step, observed.pullGrant);
  // Status, Events and the wait from everything above; the revision history is truncated last, once the
  // status says which revision is current.
  const input: StatusInput = {
    set,
    owned: adopted.owned,
    canary,
    collisionCount: revs.collisionCount,
    actions: acc.actions,
    specValid: !set.createBlocked,
    fallbacks: acc.fallbacks ?? [],
    deferred: acc.deferred,
  };
  const result = finishPlan(app, input, acc, { canary, prewarm, budgetWait, hold, guards, abort, analysis });
  const planned = withHistory(app, observed, result, adopted.owned, revs);
  return 'needs' in planned ? planned : withPrewarmWait(planned, now);
}
