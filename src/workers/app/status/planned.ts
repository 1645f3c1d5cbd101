/**
 * `status/` owns the App's status: the status of a plan (this file), replica counts and conditions
 * (`replicas.ts`), the status after a failed write (`after-failure.ts`), deferred work (`deferred-work.ts`),
 * condition helpers and the status patch (`merge-diff.ts`).
 *
 * Assembles `App.status` for a plan: counts, revisions (with rollout completion), canary progress,
 * conditions. Also the status of Apps the planner does not act on (invalid spec, being deleted).
 */
import type { App } from '../../../api/app.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import { Annotation, ConditionType, EventReason, Label, Reason } from '../../../api/keys.ts';
import type { Condition } from '../../../api/meta.ts';
import { podIsUpdatingInPlace, type FallbackTexts } from '../../inplace/index.ts';
import type { Action } from '../model/actions.ts';
import type { CanaryOutcome } from '../rollout/canary.ts';
import { findCondition, setCondition } from '../../shared/conditions.ts';
import type { Named, Pod, Stored } from '../../../kube/types.ts';
import { getPodRevision } from '../pods/predicates.ts';
import type { PodSet } from '../pods/pod-set.ts';
import { selectorString } from '../pods/selector.ts';
import { appConditions, replicaCounts, type PauseState, type Progress, type ReplicaCounts } from './replicas.ts';
import { maxUnavailable } from '../rollout/unavailable.ts';
import { deferredProgress } from './deferred-work.ts';
import type { DeferredWork } from '../model/deferred-work.ts';
import { mayRunUpdate } from '../rollout/update-order.ts';
import { rollingBackProgress } from '../rollout/abort.ts';

function countsStatus(c: ReplicaCounts): Pick<AppStatus, keyof ReplicaCounts> {
  return { ...c };
}

/** A rollout is complete once every pod runs the update revision and is ready (upstream completeRollingUpdate). */
function completedCurrent(counts: ReplicaCounts, current: string, update: string): { current: string; counts: ReplicaCounts } {
  if (current !== update && counts.updatedReplicas === counts.replicas && counts.readyReplicas === counts.replicas) {
    return { current: update, counts: { ...counts, currentReplicas: counts.updatedReplicas } };
  }
  return { current, counts };
}

/** Replicas at or above the spec partition not at the update revision or still being updated in place (RollingUpdate only). */
function outdatedReplicas(set: PodSet): number {
  if (!set.rollout.rolling) return 0;
  const update = set.update.metadata.name;
  let outdated = 0;
  for (const ord of set.ordinals) {
    const pod = set.replicas.get(ord);
    if (pod && mayRunUpdate(set, ord, set.rollout.partition) && (getPodRevision(pod) !== update || podIsUpdatingInPlace(pod))) outdated++;
  }
  return outdated;
}

/** The rolling update's (or canary step's) Progressing state: how many pods run the update revision. */
function rolloutProgress(set: PodSet, counts: ReplicaCounts, canary: CanaryOutcome): Progress {
  const want = set.ordinals.length;
  const updated = `${counts.updatedReplicas} of ${want} pods at revision ${set.update.metadata.name}`;
  const steps = set.rollout.canarySteps.length;
  const step = canary.status?.step ?? steps;
  if (step < steps) return { state: 'canary', message: `canary step ${step + 1} of ${steps}: ${updated}` };
  return { state: 'rollingUpdate', message: `rolling update: ${updated}` };
}

/** Whether the App's status (as read) says a rollout is under way: Progressing True for the rolling update or a canary step. */
function wasRolling(set: PodSet): boolean {
  const p = findCondition(set.app.status?.conditions, ConditionType.progressing);
  return p?.status === 'True' && (p.reason === Reason.rollingUpdate || p.reason === Reason.canaryStep);
}

/**
 * `pods`: how many pods the App owns once the plan's writes are made, and how many of them it creates;
 * `current`: the current revision once this plan's status is written (the update revision once complete).
 */
function progressOf(
  set: PodSet,
  counts: ReplicaCounts,
  canary: CanaryOutcome,
  pods: { owned: number; created: number; current: string },
  deferred: DeferredWork | undefined,
): Progress {
  const ownedCount = pods.owned;
  const want = set.ordinals.length;
  const update = set.update.metadata.name;
  if (set.aborted) {
    const back = rollingBackProgress(set.aborted.abort, update, outdatedReplicas(set));
    return { state: back.status === 'True' ? 'rollingBack' : 'aborted', message: back.message };
  }
  if (outdatedReplicas(set) > 0) return rolloutProgress(set, counts, canary);
  const waiting = deferredProgress(deferred, want, ownedCount);
  if (waiting) return waiting;
  // The last step of a rollout (the pod just recreated, or updated in place and not available yet) leaves no
  // pod outdated, yet the rollout is not over: it is still the rollout that waits, never a scale. So while the
  // update revision is not current, or the status said the rollout was under way, until every pod is available.
  const shortOfPods = ownedCount !== want || set.replicas.size + pods.created !== want || counts.availableReplicas < want;
  if (shortOfPods && set.rollout.rolling && (pods.current !== update || wasRolling(set))) return rolloutProgress(set, counts, canary);
  if (ownedCount !== want || set.replicas.size + pods.created !== want) return { state: 'scaling', message: `scaling to ${want} pods: ${ownedCount} exist` };
  if (counts.availableReplicas < want) return { state: 'scaling', message: `${counts.availableReplicas} of ${want} pods available` };
  return { state: 'complete', message: `${want} pods available at revision ${update}` };
}

function pauseState(canary: CanaryOutcome, specPaused: boolean): { pause: PauseState; message: string } {
  const step = (canary.status?.step ?? 0) + 1;
  if (canary.pause === 'timed')
    return {
      pause: 'canaryTimed',
      message: `canary step ${step}: paused until ${new Date(Date.parse(canary.status?.pausedAt ?? '') + (canary.waitMs ?? 0)).toISOString()}`,
    };
  if (canary.pause === 'manual')
    return { pause: 'canaryManual', message: `canary step ${step}: paused; set spec.updateStrategy.rollingUpdate.paused to false to continue` };
  if (specPaused) return { pause: 'spec', message: 'spec.updateStrategy.rollingUpdate.paused is true: no pod is updated' };
  return { pause: undefined, message: '' };
}

export interface StatusInput {
  set: PodSet;
  owned: readonly Stored<Pod>[];
  canary: CanaryOutcome;
  collisionCount: number;
  actions: readonly Action[];
  /** The App's InvalidSpec condition is cleared (spec fine, pods not rejected). */
  specValid: boolean;
  /** Outdated pods that cannot be updated in place, highest ordinal first (InPlaceFallback). */
  fallbacks: readonly FallbackTexts[];
  /** Count the pods as `actions` leave them (default) or as read. */
  projectWrites?: boolean;
  /** Work held back on purpose (scale-up limit, specified deletes waiting). */
  deferred?: DeferredWork | undefined;
}

/** InPlaceFallback: True while an outdated pod cannot be updated in place; False once none is left (when it was set). */
function fallbackCondition(conditions: Condition[], fallbacks: readonly FallbackTexts[], now: Date, generation: number | undefined): Condition[] {
  const first = fallbacks[0];
  if (first) return setCondition(conditions, first.condition, now, generation);
  if (findCondition(conditions, ConditionType.inPlaceFallback)?.status !== 'True') return conditions;
  return setCondition(
    conditions,
    {
      type: ConditionType.inPlaceFallback,
      status: 'False',
      reason: Reason.noFallbackPending,
      message: 'no pod still to be updated needs recreating or is refused',
    },
    now,
    generation,
  );
}

/** `pod` as the plan's write `action` leaves it, or undefined when the action does not change it. */
function projected(pod: Named<Pod> | undefined, action: Action, now: Date): Named<Pod> | undefined {
  switch (action.kind) {
    case 'createPod':
      return pod ?? action.pod;
    case 'deletePod':
      return pod && !pod.metadata.deletionTimestamp ? { ...pod, metadata: { ...pod.metadata, deletionTimestamp: now.toISOString() } } : undefined;
    case 'inPlaceStep': {
      const step = action.step;
      if (!pod) return undefined;
      if (step.kind === 'start')
        return { ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata.annotations, [Annotation.inPlaceUpdateState]: step.annotation } } };
      if (step.kind === 'patchSpec' && step.revisionLabel !== undefined)
        return { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, [Label.revision]: step.revisionLabel } } };
      return undefined;
    }
    default:
      return undefined;
  }
}

/**
 * The owned pods as the plan's pod writes leave them: created pods exist (not ready yet), deleted pods are
 * terminating, a pod whose in-place update starts carries its state annotation, a pod relabelled without a
 * restart carries the new revision. The status written after those writes already counts them, so their own
 * watch events change no counter (about one status write per pod in a rolling update instead of three).
 */
export function projectPodWrites(owned: readonly Named<Pod>[], actions: readonly Action[], now: Date): Named<Pod>[] {
  const byName = new Map(owned.map((p) => [p.metadata.name, p]));
  for (const action of actions) {
    const name = action.kind === 'createPod' ? action.pod.metadata.name : 'name' in action ? action.name : undefined;
    if (name === undefined) continue;
    const pod = projected(byName.get(name), action, now);
    if (pod) byName.set(name, pod);
  }
  return [...byName.values()];
}

const isUpdateAction = (a: Action): boolean => (a.kind === 'deletePod' && a.cause === 'update') || a.kind === 'inPlaceStep';

export function planStatus(input: StatusInput): AppStatus {
  const { set, owned, canary, actions } = input;
  const app = set.app;
  const generation = app.metadata.generation;
  const pods = input.projectWrites === false ? owned : projectPodWrites(owned, actions, set.now);
  // Aborted, the pods go back to the current revision: the counts and updateRevision still name the template's.
  const template = set.aborted?.from ?? set.update;
  const raw = replicaCounts(pods, set.minReadySeconds, set.now, set.current.metadata.name, template.metadata.name);
  const done = set.aborted ? { current: set.current.metadata.name, counts: raw } : completedCurrent(raw, set.current.metadata.name, template.metadata.name);
  const specPaused = set.rollout.paused || canary.pauseSpec;
  const paused = pauseState(canary, specPaused);
  let conditions = appConditions(
    app.status?.conditions,
    {
      specReplicas: set.ordinals.length,
      maxUnavailable: maxUnavailable(set),
      counts: done.counts,
      progress: progressOf(set, done.counts, canary, { owned: pods.length, created: pods.length - owned.length, current: done.current }, input.deferred),
      pause: paused.pause,
      pauseMessage: paused.message,
      createsPlanned: actions.some((a) => a.kind === 'createPod'),
      updatesPlanned: actions.some(isUpdateAction),
    },
    set.now,
    generation,
  );
  conditions = fallbackCondition(conditions, input.fallbacks, set.now, generation);
  if (input.specValid && findCondition(conditions, ConditionType.invalidSpec)?.status === 'True') {
    conditions = setCondition(
      conditions,
      { type: ConditionType.invalidSpec, status: 'False', reason: Reason.specValid, message: 'the spec is valid' },
      set.now,
      generation,
    );
  }
  return {
    observedGeneration: generation,
    ...countsStatus(done.counts),
    currentRevision: done.current,
    updateRevision: template.metadata.name,
    collisionCount: input.collisionCount,
    labelSelector: selectorString(app.spec.selector),
    ...(canary.status ? { canary: canary.status } : {}),
    conditions,
  };
}

/** Status when the planner does not act: counts against the revisions status already names. */
export function passiveStatus(app: Stored<App>, owned: readonly Stored<Pod>[], minReadySeconds: number, now: Date): AppStatus {
  const prev = app.status ?? {};
  const counts = replicaCounts(owned, minReadySeconds, now, prev.currentRevision ?? '', prev.updateRevision ?? '');
  return { ...prev, observedGeneration: app.metadata.generation, ...countsStatus(counts), labelSelector: selectorString(app.spec.selector) };
}

/** InvalidSpec=True with the problems, and an Event when the condition is new or its message changed. */
export function invalidSpecStatus(
  app: Stored<App>,
  owned: readonly Stored<Pod>[],
  problems: readonly string[],
  now: Date,
): { status: AppStatus; actions: Action[] } {
  const status = passiveStatus(app, owned, app.spec.minReadySeconds ?? 0, now);
  const message = problems.join('; ');
  const previous = findCondition(app.status?.conditions, ConditionType.invalidSpec);
  status.conditions = setCondition(
    app.status?.conditions,
    { type: ConditionType.invalidSpec, status: 'True', reason: Reason.specInvalid, message },
    now,
    app.metadata.generation,
  );
  const isNew = previous?.status !== 'True' || previous.message !== message;
  const actions: Action[] = isNew ? [{ kind: 'event', event: { type: 'Warning', reason: EventReason.invalidSpec, action: 'Validate', message } }] : [];
  return { status, actions };
}
