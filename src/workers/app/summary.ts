/**
 * What one App reconcile did, as a pure function of the plan and how far its execution got: the job's return
 * value (a small summary Bull Board shows) and a few job log lines, one per phase that acted. Both are
 * bounded: counts by action kind (a fixed set), at most `MAX_NAMES` names per line, at most `MAX_LOG_LINES`
 * lines, messages cut at `MAX_MESSAGE` characters. Nothing here carries an apiserver's error text: a failed
 * write is named by its action kind, and conditions whose message holds an apiserver's answer are named by
 * their reason only.
 */
import type { AnalysisStatus, Measurement } from '../../api/analysis.ts';
import { measuredSince } from './rollout/analysis/book.ts';
import type { AppStatus } from '../../api/app-status.ts';
import { ConditionType, Reason } from '../../api/keys.ts';
import type { Condition } from '../../api/meta.ts';
import type { Wait } from '../types.ts';
import type { Action } from './model/actions.ts';
import type { Plan } from './model/plan.ts';

export const MAX_NAMES = 5;
export const MAX_LOG_LINES = 10;
export const MAX_MESSAGE = 200;
export const MAX_BLOCKED = 4;

export type ActionKind = Action['kind'];

/** How far the executor got: the non-pre-warm actions performed in order, where it stopped, pre-warm failures. */
export interface Executed {
  /** Actions performed (or found already in effect), counted in the plan's order; pre-warm writes not counted. */
  performed: number;
  /** The action whose failure ended the reconcile without a retry (the rest of the plan was not performed). */
  stoppedAt?: ActionKind | undefined;
  /** Pre-warm writes that failed (they are best effort). */
  prewarmFailed: number;
  /** The wait the reconcile ended with. */
  wait?: Wait | undefined;
}

export interface WaitSummary {
  reason: string;
  afterMs: number;
  /** When the timer fires (ISO time). */
  until: string;
}

export interface ConditionSummary {
  type: string;
  reason: string;
  message?: string;
}

export interface AppSummary {
  generation?: number;
  revisions: { current?: string; update?: string };
  /** Actions taken, by kind, with counts (pre-warm writes that failed included, and counted in `prewarmFailed`). */
  actions: Partial<Record<ActionKind, number>>;
  notPerformed?: { count: number; stoppedAt: ActionKind };
  prewarmFailed?: number;
  wait?: WaitSummary;
  /** Condition RolloutHeld, when the rollout is held. */
  held?: ConditionSummary;
  /** What keeps the App from progressing (a pause, a hook, a refused write, the deadline); at most `MAX_BLOCKED`. */
  blocked?: ConditionSummary[];
  /** Analysis measurements this plan took, by phase (the worker counts them in `ebb_analysis_measurements_total`). */
  measurements?: Partial<Record<Measurement['phase'], number>>;
}

const PREWARM_KINDS: readonly ActionKind[] = ['requestPrewarm', 'removePrewarm'];

/** The phases a log line is written for, and the action kinds each covers. */
const PHASES: readonly (readonly [string, readonly ActionKind[]])[] = [
  ['revisions', ['createRevision', 'renumberRevision', 'adoptRevision', 'deleteRevision']],
  ['pods', ['adoptPod', 'fixPodIdentity', 'createPod', 'deletePod', 'markGateReady']],
  ['in-place', ['inPlaceStep']],
  ['lifecycle', ['podLifecycle']],
  ['claims', ['createPvc', 'setPvcOwners', 'expandPvc']],
  ['rollout', ['pauseRollout', 'clearAnnotations']],
  ['events', ['event']],
  ['pre-warm', PREWARM_KINDS],
];

/** Conditions that explain a wait; those whose message may hold an apiserver's answer are shown by reason only. */
const BLOCKING: readonly { type: string; message: boolean; reasons?: readonly string[] }[] = [
  { type: ConditionType.paused, message: true },
  { type: ConditionType.lifecycleHookWaiting, message: true },
  { type: ConditionType.invalidSpec, message: true },
  { type: ConditionType.failedCreatePod, message: false },
  { type: ConditionType.failedUpdatePod, message: false },
  { type: ConditionType.volumeExpansionRefused, message: false },
  // Only when a pod is refused in place (InPlaceOnly, a resize the kubelet refused): a fallback to recreation is progress.
  { type: ConditionType.inPlaceFallback, message: false, reasons: [Reason.inPlaceOnlyRefused, Reason.resizeRefused] },
];

export function cut(text: string, max = MAX_MESSAGE): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The object an action is about, for a log line. */
export function actionTarget(a: Action): string {
  switch (a.kind) {
    case 'createRevision':
      return a.revision.metadata.name;
    case 'createPod':
      return a.pod.metadata.name;
    case 'createPvc':
      return a.pvc.metadata.name;
    case 'deletePod':
      return `${a.name} (${a.cause})`;
    case 'event':
      return a.event.reason;
    case 'requestPrewarm':
    case 'removePrewarm':
      return a.node;
    case 'pauseRollout':
      return a.paused === false ? `resume (step ${a.step})` : `step ${a.step}`;
    case 'clearAnnotations':
      return a.keys.join(', ');
    default:
      return a.name;
  }
}

/** The actions the executor attempted: the first `performed` of the plan's order, then pre-warm unless stopped. */
export function attempted(actions: readonly Action[], run: Executed): Action[] {
  const main = actions.filter((a) => !PREWARM_KINDS.includes(a.kind)).slice(0, run.performed);
  return run.stoppedAt ? main : [...main, ...actions.filter((a) => PREWARM_KINDS.includes(a.kind))];
}

function countByKind(actions: readonly Action[]): Partial<Record<ActionKind, number>> {
  const counts: Partial<Record<ActionKind, number>> = {};
  for (const a of actions) counts[a.kind] = (counts[a.kind] ?? 0) + 1;
  return counts;
}

function conditionSummary(c: Condition, withMessage: boolean): ConditionSummary {
  return { type: c.type, reason: c.reason, ...(withMessage && c.message ? { message: cut(c.message) } : {}) };
}

function blockedBy(status: AppStatus): ConditionSummary[] {
  const conditions = status.conditions ?? [];
  const found: ConditionSummary[] = [];
  for (const b of BLOCKING) {
    const c = conditions.find((x) => x.type === b.type && x.status === 'True' && (b.reasons === undefined || b.reasons.includes(x.reason ?? '')));
    if (c) found.push(conditionSummary(c, b.message));
  }
  const progressing = conditions.find((x) => x.type === ConditionType.progressing);
  if (progressing?.reason === Reason.progressDeadlineExceeded) found.push(conditionSummary(progressing, true));
  return found.slice(0, MAX_BLOCKED);
}

function heldBy(status: AppStatus): ConditionSummary | undefined {
  const c = status.conditions?.find((x) => x.type === ConditionType.rolloutHeld && x.status === 'True');
  // Its message quotes the apiserver's refusal: by reason only (the App's status has it whole).
  return c ? conditionSummary(c, false) : undefined;
}

/** The summary of one App reconcile: what was done, why it waits, at which revisions and generation. */
export function summarizeApp(plan: Plan, generation: number | undefined, run: Executed, now: Date, priorAnalysis?: AnalysisStatus): AppSummary {
  const done = attempted(plan.actions, run);
  const total = plan.actions.filter((a) => !PREWARM_KINDS.includes(a.kind)).length;
  const held = heldBy(plan.status);
  const blocked = blockedBy(plan.status);
  const { currentRevision: current, updateRevision: update } = plan.status;
  const measured = measuredSince(priorAnalysis, plan.status.analysis);
  return {
    ...(generation === undefined ? {} : { generation }),
    revisions: { ...(current ? { current } : {}), ...(update ? { update } : {}) },
    actions: countByKind(done),
    ...(run.stoppedAt ? { notPerformed: { count: total - run.performed, stoppedAt: run.stoppedAt } } : {}),
    ...(run.prewarmFailed > 0 ? { prewarmFailed: run.prewarmFailed } : {}),
    ...(run.wait
      ? { wait: { reason: run.wait.reason, afterMs: run.wait.afterMs, until: new Date(now.getTime() + Math.max(0, run.wait.afterMs)).toISOString() } }
      : {}),
    ...(held ? { held } : {}),
    ...(blocked.length > 0 ? { blocked } : {}),
    ...(Object.keys(measured).length > 0 ? { measurements: measured } : {}),
  };
}

function namesLine(targets: readonly string[]): string {
  const shown = targets.slice(0, MAX_NAMES).join(', ');
  return targets.length > MAX_NAMES ? `${shown} and ${targets.length - MAX_NAMES} more` : shown;
}

function phaseLine(phase: string, actions: readonly Action[]): string | undefined {
  if (actions.length === 0) return undefined;
  const counts = Object.entries(countByKind(actions))
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
  return `${phase}: ${counts} (${namesLine(actions.map(actionTarget))})`;
}

const conditionText = (c: ConditionSummary): string => `${c.type} ${c.reason}${c.message ? `: ${c.message}` : ''}`;

/** The job's log lines: one per phase that acted, then where it stopped, the wait, a hold and what blocks. */
export function summaryLines(plan: Plan, summary: AppSummary, run: Executed): string[] {
  const done = attempted(plan.actions, run);
  const lines = PHASES.map(([phase, kinds]) =>
    phaseLine(
      phase,
      done.filter((a) => kinds.includes(a.kind)),
    ),
  ).filter((l): l is string => l !== undefined);
  if (lines.length === 0) lines.push('no writes');
  if (summary.notPerformed) lines.push(`stopped at a failed ${summary.notPerformed.stoppedAt}; ${summary.notPerformed.count} planned actions not performed`);
  if (summary.prewarmFailed) lines.push(`pre-warm: ${summary.prewarmFailed} ImageList writes failed; tried again later`);
  if (summary.held) lines.push(`held: ${conditionText(summary.held)}`);
  for (const b of summary.blocked ?? []) lines.push(`blocked: ${conditionText(b)}`);
  if (summary.wait) lines.push(`wait: ${summary.wait.reason} until ${summary.wait.until}`);
  return lines.slice(0, MAX_LOG_LINES).map((l) => cut(l, 2 * MAX_MESSAGE));
}
