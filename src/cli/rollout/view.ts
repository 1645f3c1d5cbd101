/** Pure: what `ebb rollout status` sees in an App and its pods, and the line it prints. */
import type { App } from '../../api/app.ts';
import { ConditionType, Reason } from '../../api/keys.ts';
import { UpdateStrategyType, type CanaryStep } from '../../api/update-strategy.ts';
import type { Pod } from '../../kube/types.ts';
import { podIsUpdatingInPlace } from '../../workers/inplace/status.ts';
import { isRunningAndReady } from '../../workers/app/pods/predicates.ts';
import { rolloutSettings } from '../../workers/app/model/rollout-settings.ts';

/**
 * Condition types and reasons of features that may be absent from the installed ebb: read by name, shown
 * when present, ignored otherwise.
 */
export const OptionalCondition = {
  /** True while pods wait on a lifecycle hook; the message names the pods and how long. */
  lifecycleHookWaiting: 'LifecycleHookWaiting',
  /** Progressing False with this reason: the rollout made no progress within spec.progressDeadlineSeconds. */
  progressDeadlineExceeded: 'ProgressDeadlineExceeded',
  /** True while the rollout is aborted (pods go back to the current revision); reason: why. */
  aborted: 'Aborted',
  /** Progressing False with this reason: an aborted rollout is back at the current revision. */
  rolloutAborted: 'RolloutAborted',
} as const;

/** The App's pods as the status line counts them. */
export interface PodsSummary {
  total: number;
  /** Names of pods whose in-place update is under way. */
  inPlace: string[];
  /** Names of pods neither ready nor terminating (in-place ones excluded). */
  notReady: string[];
  terminating: string[];
}

const byName = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

export function summarizePods(pods: Iterable<Pod>): PodsSummary {
  const s: PodsSummary = { total: 0, inPlace: [], notReady: [], terminating: [] };
  for (const pod of pods) {
    const name = pod.metadata.name ?? '';
    s.total++;
    if (pod.metadata.deletionTimestamp) s.terminating.push(name);
    else if (podIsUpdatingInPlace(pod)) s.inPlace.push(name);
    else if (!isRunningAndReady(pod)) s.notReady.push(name);
  }
  s.inPlace.sort(byName);
  s.notReady.sort(byName);
  s.terminating.sort(byName);
  return s;
}

export type RolloutState = 'progressing' | 'done' | 'failed' | 'deadline' | 'aborted';

export interface RolloutView {
  state: RolloutState;
  /** One line: where the rollout is (no newline). */
  line: string;
  /** For a final state: the closing sentence. */
  final?: string;
}

interface Cond {
  type: string;
  status: string;
  reason?: string | undefined;
  message?: string | undefined;
}

function condition(app: App, type: string): Cond | undefined {
  return (app.status?.conditions as Cond[] | undefined)?.find((c) => c.type === type);
}

const isTrue = (c: Cond | undefined): c is Cond => c?.status === 'True';

/** At most `max` names, then "+N more". */
function names(list: readonly string[], max = 3): string {
  const shown = list.slice(0, max).join(', ');
  return list.length > max ? `${shown} +${list.length - max} more` : shown;
}

function stepWords(step: CanaryStep | undefined): string {
  if (step?.pause) return `pause${step.pause.duration ? ` ${step.pause.duration}` : ''}`;
  if (step?.analysis) return `analysis ${step.analysis.join(', ')}`;
  return `replicas ${String(step?.replicas)}`;
}

function canaryPart(app: App): string | undefined {
  const steps = rolloutSettings(app).canarySteps;
  const step = app.status?.canary?.step;
  if (steps.length === 0 || step === undefined || step >= steps.length) return undefined;
  return `canary step ${step + 1}/${steps.length} (${stepWords(steps[step])})`;
}

function countsPart(app: App): string {
  const want = app.spec.replicas ?? 1;
  const st = app.status ?? {};
  const partition = rolloutSettings(app).partition;
  const updatedOf = partition > 0 ? `${Math.max(0, want - partition)} (partition ${partition})` : String(want);
  return `updated ${st.updatedReplicas ?? 0}/${updatedOf} · ready ${st.readyReplicas ?? 0}/${want} · available ${st.availableReplicas ?? 0}/${want}`;
}

function podsPart(pods: PodsSummary): string[] {
  const parts: string[] = [];
  if (pods.inPlace.length > 0) parts.push(`in place: ${names(pods.inPlace)}`);
  if (pods.notReady.length > 0) parts.push(`not ready: ${names(pods.notReady)}`);
  if (pods.terminating.length > 0) parts.push(`terminating: ${names(pods.terminating)}`);
  return parts;
}

/** The checks of the rollout in progress that have not passed: each one's phase and counts. */
function analysisPart(app: App): string | undefined {
  const record = app.status?.analysis;
  if (!record || record.revision !== app.status?.updateRevision || app.status.currentRevision === record.revision) return undefined;
  const open = record.runs.filter((r) => r.phase !== 'Successful');
  if (open.length === 0) return undefined;
  const runs = open.map((r) => `${r.name} ${r.phase.toLowerCase()} (${r.successful} passed, ${r.failed} failed, ${r.inconclusive} inconclusive)`);
  return `analysis ${runs.join(', ')}`;
}

function extrasPart(app: App): string[] {
  const parts: string[] = [];
  const analysis = analysisPart(app);
  if (analysis) parts.push(analysis);
  const paused = condition(app, ConditionType.paused);
  if (isTrue(paused)) parts.push(paused.reason === Reason.canaryTimedPause && paused.message ? paused.message : 'paused');
  const hook = condition(app, OptionalCondition.lifecycleHookWaiting);
  if (isTrue(hook)) parts.push(`hook: ${hook.message ?? hook.reason ?? 'waiting'}`);
  const held = condition(app, ConditionType.rolloutHeld);
  if (isTrue(held)) parts.push(`held: ${held.message ?? held.reason ?? ''}`);
  const prewarm = app.status?.prewarm;
  if (prewarm && prewarm.nodesRequested > 0)
    parts.push(`pre-warm ${prewarm.nodesPulled}/${prewarm.nodesRequested} nodes${prewarm.nodesFailed > 0 ? ` (${prewarm.nodesFailed} failed)` : ''}`);
  return parts;
}

/** What failed for good (until someone edits the App), or undefined. */
function failure(app: App): string | undefined {
  const invalid = condition(app, ConditionType.invalidSpec);
  if (isTrue(invalid)) return `invalid spec: ${invalid.message ?? invalid.reason ?? ''}`;
  const fallback = condition(app, ConditionType.inPlaceFallback);
  if (isTrue(fallback) && fallback.reason === Reason.inPlaceOnlyRefused) return fallback.message ?? 'an in-place update was refused';
  return undefined;
}

/** While aborted: why, and where the pods go back to. */
function abortPart(app: App): string | undefined {
  const aborted = condition(app, OptionalCondition.aborted);
  if (!isTrue(aborted)) return undefined;
  const back = condition(app, ConditionType.progressing)?.reason === OptionalCondition.rolloutAborted;
  const current = app.status?.currentRevision ?? '';
  return `aborted (${aborted.reason ?? ''}): ${back ? `back at revision ${current}` : `rolling back to revision ${current}`}`;
}

/**
 * Scaling only when the App scales with no rollout under way: while the update revision is not the current
 * one, or a pod is updated in place, a missing or unready pod is the rollout's step (a controller that said
 * Scaling for it is not believed).
 */
function isScaling(app: App, pods: PodsSummary): boolean {
  const { currentRevision, updateRevision } = app.status ?? {};
  const rollout = (currentRevision !== undefined && currentRevision !== updateRevision) || pods.inPlace.length > 0;
  return condition(app, ConditionType.progressing)?.reason === Reason.scaling && !rollout;
}

/** Where the rollout is: a canary step, scaling, the rolling update, or a spec not seen yet. */
export function phaseOf(app: App, pods: PodsSummary): string {
  if ((app.status?.observedGeneration ?? 0) < (app.metadata.generation ?? 0)) return `waiting for generation ${app.metadata.generation ?? 0} to be observed`;
  return abortPart(app) ?? canaryPart(app) ?? (isScaling(app, pods) ? 'scaling' : 'rolling update');
}

function statusLine(app: App, pods: PodsSummary): string {
  const phase = phaseOf(app, pods);
  return `${app.metadata.name ?? ''}: ${[phase, countsPart(app), ...extrasPart(app), ...podsPart(pods)].join(' · ')}`;
}

function completion(app: App): string {
  const name = app.metadata.name ?? '';
  const want = app.spec.replicas ?? 1;
  const partition = rolloutSettings(app).partition;
  const revision = app.status?.updateRevision ?? '';
  return partition > 0 && partition < want
    ? `app "${name}" partitioned rollout complete: ${app.status?.updatedReplicas ?? 0} of ${want} pods at revision ${revision} (partition ${partition})`
    : `app "${name}" rolled out: ${want} pod${want === 1 ? '' : 's'} at revision ${revision}`;
}

/**
 * An aborted rollout: the closing sentence. Final at once, as Argo Rollouts' status ends at Degraded: an abort
 * ends the rollout whether or not every pod is back yet (a pause may hold them), so a pipeline learns of it now.
 */
function abortedOutcome(app: App, progressing: Cond | undefined): string | undefined {
  const aborted = condition(app, OptionalCondition.aborted);
  if (!isTrue(aborted)) return undefined;
  const current = app.status?.currentRevision ?? '';
  const back = progressing?.status === 'False' && progressing.reason === OptionalCondition.rolloutAborted;
  const where = back ? `every pod is back at revision ${current}` : `pods are going back to revision ${current}`;
  return `app "${app.metadata.name ?? ''}" rollout aborted: ${aborted.message ?? aborted.reason ?? ''}; ${where}`;
}

/** The final state and its sentence, or undefined while the rollout goes on. */
function outcome(app: App): { state: Exclude<RolloutState, 'progressing'>; final: string } | undefined {
  const name = app.metadata.name ?? '';
  const progressing = condition(app, ConditionType.progressing);
  if (progressing?.status === 'False' && progressing.reason === OptionalCondition.progressDeadlineExceeded)
    return { state: 'deadline', final: `app "${name}" exceeded its progress deadline: ${progressing.message ?? ''}` };
  const aborted = abortedOutcome(app, progressing);
  if (aborted) return { state: 'aborted', final: aborted };
  const failed = failure(app);
  if (failed) return { state: 'failed', final: `app "${name}" rollout failed: ${failed}` };
  const strategy = app.spec.updateStrategy?.type ?? UpdateStrategyType.rollingUpdate;
  if (strategy !== UpdateStrategyType.rollingUpdate)
    return { state: 'failed', final: `app "${name}" uses the ${strategy} strategy: rollout status is only available for RollingUpdate` };
  return isComplete(app, progressing) ? { state: 'done', final: completion(app) } : undefined;
}

function isComplete(app: App, progressing: Cond | undefined): boolean {
  return progressing?.status === 'False' && progressing.reason === Reason.rolloutComplete && (app.status?.availableReplicas ?? 0) >= (app.spec.replicas ?? 1);
}

/**
 * Pure: the rollout as `ebb rollout status` reports it. Done when the controller has seen the latest spec and
 * says the rollout is complete (Progressing False, RolloutComplete) with every desired pod available; failed
 * on what only an edit of the App mends; `deadline` when the App's progress deadline passed; `aborted` as soon
 * as the rollout is aborted (the sentence says whether every pod is back at the stable revision yet).
 */
export function viewRollout(app: App, pods: PodsSummary): RolloutView {
  const observed = (app.status?.observedGeneration ?? 0) >= (app.metadata.generation ?? 0);
  const line = statusLine(app, pods);
  const end = observed ? outcome(app) : undefined;
  return end ? { ...end, line } : { state: 'progressing', line };
}
