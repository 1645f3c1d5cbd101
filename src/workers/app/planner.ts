/**
 * `plan(observed, now)`: the App reconcile as a pure function from what was read (the App, the pods its
 * selector matches, its ControllerRevisions and claims) to the writes to make, the status to record, and
 * when to look again. Follows the upstream StatefulSet controller (stateful_set_control.go): revisions
 * first, then replicas ascending, then condemned pods descending, then the rolling update. In-place updates
 * already under way get their next step even when the rest is blocked (OrderedReady waits on those very pods);
 * so do pods in a lifecycle state, and the lifecycle hooks put their writes in front of deletes and in-place updates.
 */
import type { App } from '../../api/app.ts';
import type { AppStatus } from '../../api/app-status.ts';
import type { ImageList } from '../../api/image-list.ts';
import { withAppSpecDefaults } from '../../api/defaults.ts';
import { ConditionType, EventReason } from '../../api/keys.ts';
import { UpdateStrategyType } from '../../api/update-strategy.ts';
import type { Wait } from '../types.ts';
import type { Action } from './actions.ts';
import { canaryProgress, type CanaryOutcome } from './rollout/canary.ts';
import { adoptPods } from './ownership/adopt.ts';
import { rolloutCompleteEvent } from './events.ts';
import { isTrueFor } from './status/conditions.ts';
import type { ClusterStored, ControllerRevision, PersistentVolumeClaim, Pod, Stored } from '../../kube/types.ts';
import { invalidSpecStatus, passiveStatus, planStatus, type StatusInput } from './status/planned.ts';
import { getPodRevision, isRunningAndAvailable, isTerminating } from './pods/predicates.ts';
import { type Accumulator, floorForTop, isMonotonic, ordinalRange, type PodSet, splitPods } from './pods/pod-set.ts';
import { type ResolvedRevisions } from './revisions/revisions.ts';
import { revisionsOf, withHistory } from './revisions/history.ts';
import { planCondemned, planReplicas } from './scaling/scale-plan.ts';
import { availabilityWait } from './status/replicas.ts';
import { planInFlight, updateContext } from './rollout/inplace-plan.ts';
import { gateLifecycle, planPrepared } from './lifecycle/plan.ts';
import { reportLifecycle } from './lifecycle/report.ts';
import { prewarmStep, withPrewarmStatus, type RolloutView } from './prewarm/targets.ts';
import { planFallbackReport, planRollingUpdate } from './rollout/update-plan.ts';
import { specProblems } from './spec/validate.ts';
import { planSpecifiedDeletes } from './rollout/specified-delete.ts';
import { heldEvent } from './status/deferred-work.ts';
import type { PrewarmOutcome } from './prewarm/plan.ts';
import { type Hold, holdRefused, recreatesPods, type Refusals } from './admission/replacement.ts';
import { holdEvent, withHoldCondition, type HoldInput } from './admission/rollout-held.ts';
import { withExpansionCondition } from './rollout/volume-growth.ts';
import { priorityReached, priorityStrategyOf } from './rollout/update-order.ts';
import { planGuards, withGuardStatus, type Guards } from './rollout/guards.ts';

export interface Observed {
  app: Stored<App>;
  /** Pods matching the App's selector (any owner). */
  pods: Stored<Pod>[];
  /**
   * ControllerRevisions matching the App's selector (any owner). Undefined when not read: the plan takes them
   * from the App's status (`derivedRevisions`) or says it needs them (`Plan.needsRevisions`).
   */
  revisions: Stored<ControllerRevision>[] | undefined;
  /**
   * Claims that may belong to the App (by the selector's matchLabels, else the App label); looked up by name.
   * Undefined when not read: a plan that needs them says so (`Plan.needsClaims`) and is redone with them.
   */
  claims: Stored<PersistentVolumeClaim>[] | undefined;
  /**
   * The ImageLists holding this App's pre-warm entries (by the App's label). Undefined when not read: a plan
   * that needs them says so (`Plan.needsImageLists`) and is redone with them.
   */
  imageLists?: ClusterStored<ImageList>[] | undefined;
  /**
   * Revisions whose replacement pods a dry run found refused (`admission/dry-run.ts`): their deletes are left out
   * and the rollout is held. Undefined when no dry run was made (or none refused).
   */
  refused?: Refusals | undefined;
}

export interface Plan {
  actions: Action[];
  /** The status once every action succeeded (it counts the pods the actions create, delete or start updating). */
  status: AppStatus;
  /** The status counting the pods as read, computed only on the failure path (when absent, `status`). */
  statusAsRead?: (() => AppStatus) | undefined;
  /** The claims were not read and this plan needs them: read them and plan again; do not execute this one. */
  needsClaims?: boolean;
  /** The ImageLists were not read and pre-warming needs them: read them and plan again; do not execute this one. */
  needsImageLists?: boolean;
  /** The revisions were not read and this plan needs them: read them and plan again; do not execute this one. */
  needsRevisions?: boolean;
  wait?: Wait | undefined;
}

function earliest(waits: readonly (Wait | undefined)[]): Wait | undefined {
  let best: Wait | undefined;
  for (const w of waits) if (w && (!best || w.afterMs < best.afterMs)) best = w;
  return best;
}

/** Whether the `target` highest-ordinal replicas (not below the partition) run the update revision and are available. */
function reachedFor(set: Omit<PodSet, 'partition'>, partition: number): (target: number) => boolean {
  if (priorityStrategyOf(set.app)) return priorityReached(set, set.minReadySeconds, set.now, partition);
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

function canaryFor(app: Stored<App>, base: Omit<PodSet, 'partition'>, specPartition: number): CanaryOutcome {
  const rolling = (app.spec.updateStrategy?.type ?? UpdateStrategyType.rollingUpdate) === UpdateStrategyType.rollingUpdate;
  const rollingUpdate = app.spec.updateStrategy?.rollingUpdate;
  return canaryProgress({
    steps: rolling ? (rollingUpdate?.canary?.steps ?? []) : [],
    replicas: base.ordinals.length,
    active: base.current.metadata.name !== base.update.metadata.name,
    sameRevision: app.status?.updateRevision === base.update.metadata.name,
    status: app.status?.canary,
    specPaused: rollingUpdate?.paused === true,
    now: base.now,
    reached: reachedFor(base, specPartition),
  });
}

function podSetFor(
  app: Stored<App>,
  owned: readonly Stored<Pod>[],
  observed: Observed,
  revs: ResolvedRevisions,
  now: Date,
): { set: PodSet; canary: CanaryOutcome; specPartition: number } {
  const { start, end, ordinals } = ordinalRange(app);
  const { replicas, condemned } = splitPods(app, owned);
  const generation = app.metadata.generation;
  const base: Omit<PodSet, 'partition'> = {
    app,
    now,
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
  const rolling = (app.spec.updateStrategy?.type ?? UpdateStrategyType.rollingUpdate) === UpdateStrategyType.rollingUpdate;
  const specPartition = rolling ? (app.spec.updateStrategy?.rollingUpdate?.partition ?? 0) : 0;
  const canary = canaryFor(app, base, specPartition);
  const partition = canary.target === undefined ? specPartition : Math.max(specPartition, floorForTop(base, canary.target));
  return { set: { ...base, partition }, canary, specPartition };
}

function canaryActions(app: Stored<App>, canary: CanaryOutcome): Action[] {
  const actions: Action[] = [];
  const step = canary.status?.step ?? 0;
  if (canary.pauseSpec) actions.push({ kind: 'pauseRollout', resourceVersion: app.metadata.resourceVersion, step });
  if (canary.enteredManualPause) {
    const message = `canary step ${step + 1}: rollout paused; set spec.updateStrategy.rollingUpdate.paused to false to continue`;
    actions.push({ kind: 'event', event: { type: 'Normal', reason: EventReason.canaryPaused, action: 'Pause', message } });
  }
  return actions;
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

/** The status (as planned and as read), the rollout's end Event, pre-warming, a hold, and the earliest wait. */
function completePlan(
  app: Stored<App>,
  input: StatusInput,
  acc: Accumulator,
  outcomes: { canary: CanaryOutcome; prewarm: PrewarmOutcome; hold: Hold | undefined; guards: Guards },
): Plan {
  const { canary, prewarm, hold, guards } = outcomes;
  const set = input.set;
  const holding: HoldInput = {
    hold,
    recreates: recreatesPods(input.actions),
    previous: app.status?.conditions,
    generation: app.metadata.generation,
    now: set.now,
  };
  const guarded = (s: AppStatus): AppStatus => withGuardStatus(s, guards, set.now, app.metadata.generation);
  const status = guarded(
    withExpansionCondition(withHoldCondition(withPrewarmStatus(planStatus(input), prewarm, set.now, app.metadata.generation), holding), set),
  );
  // Pre-warm writes are best effort: as read, the status keeps what it said about them.
  const statusAsRead = (): AppStatus =>
    guarded(
      withExpansionCondition(
        withHoldCondition(
          {
            ...planStatus({ ...input, projectWrites: false }),
            ...(app.status?.prewarm ? { prewarm: app.status.prewarm } : {}),
          },
          holding,
        ),
        set,
      ),
    );
  const held = holdEvent(holding);
  if (held) acc.actions.push({ kind: 'event', event: held });
  const waiting = heldEvent(app.status?.conditions, status.conditions);
  if (waiting) acc.actions.push({ kind: 'event', event: waiting });
  const complete = rolloutCompleteEvent(app, status);
  if (complete) acc.actions.push({ kind: 'event', event: complete });
  acc.actions.push(...prewarm.actions);
  const canaryWait: Wait | undefined = canary.waitMs !== undefined ? { reason: 'canary-pause', afterMs: canary.waitMs } : undefined;
  return {
    actions: acc.actions,
    status,
    statusAsRead,
    wait: earliest([...acc.waits, canaryWait, availabilityWait(input.owned, set.minReadySeconds, set.now)]),
  };
}

/** An App being deleted: status only, and its pre-warm entries cleared. */
function deletingPlan(app: Stored<App>, owned: readonly Stored<Pod>[], observed: Observed, now: Date): Plan {
  const status = passiveStatus(app, owned, app.spec.minReadySeconds ?? 0, now);
  const prewarm = prewarmStep(app, undefined, observed.imageLists);
  if ('needsImageLists' in prewarm) return { actions: [], status: app.status ?? {}, needsImageLists: true };
  return { actions: prewarm.actions, status: withPrewarmStatus(status, prewarm, now, app.metadata.generation), statusAsRead: () => status };
}

export function plan(observed: Observed, now: Date): Plan {
  const app: Stored<App> = { ...observed.app, spec: withAppSpecDefaults(observed.app.spec) };
  const adopted = adoptPods(app, observed.pods);
  const problems = specProblems(app);
  if (problems.length > 0) return invalidPlan(app, observed.pods, problems, now);
  if (app.metadata.deletionTimestamp) return deletingPlan(app, adopted.owned, observed, now);

  const revs = revisionsOf(app, observed);
  if (!revs) return { actions: [], status: app.status ?? {}, needsRevisions: true };
  const { set, canary, specPartition } = podSetFor(app, adopted.owned, observed, revs, now);
  const guards = planGuards(set, { active: revs.current.metadata.name !== revs.update.metadata.name, canary });
  const acc: Accumulator = { actions: [...adopted.actions, ...revs.actions, ...canaryActions(app, canary), ...guards.actions], waits: guards.waits };
  const blocked = planReplicas(set, acc) || planCondemned(set, acc);
  const paused = guards.paused;
  const updates = updateContext(set, revs.owned);
  const inFlight = planInFlight(updates, acc, paused);
  planPrepared(updates, acc, paused, inFlight);
  const specified = planSpecifiedDeletes(updates, acc, paused, blocked);
  if (!blocked) planRollingUpdate(updates, acc, paused, inFlight, specified);
  planFallbackReport(updates, acc);
  gateLifecycle(set, acc);
  if (claimsNeeded(acc, app, observed)) return { actions: [], status: app.status ?? {}, needsClaims: true };
  const { actions: admitted, hold } = holdRefused(acc.actions, observed.refused);
  acc.actions = admitted;
  const view: RolloutView = { set, specPartition, rolling: updates.rolling, paused, canary, actions: acc.actions };
  const prewarm = prewarmStep(app, view, observed.imageLists);
  if ('needsImageLists' in prewarm) return { actions: [], status: app.status ?? {}, needsImageLists: true };
  const input: StatusInput = {
    set,
    owned: adopted.owned,
    canary,
    collisionCount: revs.collisionCount,
    actions: acc.actions,
    specValid: !set.createBlocked,
    fallbacks: acc.fallbacks ?? [],
    held: acc.held,
  };
  const result = reportLifecycle(completePlan(app, input, acc, { canary, prewarm, hold, guards }), app, adopted.owned, now);
  return withHistory(app, observed, result, adopted.owned, revs);
}
