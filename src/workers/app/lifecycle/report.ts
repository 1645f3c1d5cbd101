/**
 * Condition LifecycleHookWaiting (pure): True while any pod waits on a lifecycle hook, its message naming the
 * pods, their hooks and how long they have waited, in steps (less than 30s, over 30s, over 1m, ... over 1d) so
 * the message, and with it the status, changes only when a step is passed. An Event is recorded whenever the
 * message changes: a new pod waits, one stops, or a wait passes the next step (a Warning from 30s on). A timer
 * brings the App back when the next step is passed; a handler's removal arrives as a pod watch event anyway.
 */
import type { App } from '../../../api/app.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import { ConditionType, EventReason, Reason } from '../../../api/keys.ts';
import type { Condition } from '../../../api/meta.ts';
import type { Wait } from '../../types.ts';
import type { Pod, Stored } from '../../../kube/types.ts';
import type { EventSpec } from '../model/actions.ts';
import { findCondition, setCondition } from '../../shared/conditions.ts';
import { hookWaits, lifecycleOf, type HookName, type HookWait } from './hooks.ts';

/** The steps (seconds) a wait is reported in. */
const WAIT_STEPS_S = [30, 60, 120, 300, 600, 1800, 3600, 21600, 86400] as const;
/** Pods named in the message; the rest are counted. */
const MAX_NAMED = 10;
const LIFECYCLE_WAIT = 'lifecycle-hook';

const REASONS: Record<HookName, string> = {
  preDelete: Reason.waitingForPreDelete,
  inPlaceUpdate: Reason.waitingForInPlaceUpdate,
  preNormal: Reason.waitingForPreNormal,
};

function stepText(seconds: number): string {
  if (seconds >= 86400) return `${seconds / 86400}d`;
  if (seconds >= 3600) return `${seconds / 3600}h`;
  if (seconds >= 60) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/** How long, in steps: `less than 30s`, `over 30s`, `over 1m`, ... */
function waitedText(waitedMs: number): string {
  let passed: number | undefined;
  for (const s of WAIT_STEPS_S) if (waitedMs >= s * 1000) passed = s;
  return passed === undefined ? `less than ${stepText(WAIT_STEPS_S[0])}` : `over ${stepText(passed)}`;
}

const waitedMs = (w: HookWait, now: Date): number => Math.max(0, now.getTime() - Date.parse(w.since));

/** Longest first, then by pod name. */
function ordered(waits: readonly HookWait[], now: Date): HookWait[] {
  return [...waits].sort((a, b) => waitedMs(b, now) - waitedMs(a, now) || a.pod.localeCompare(b.pod));
}

function waitingMessage(waits: readonly HookWait[], now: Date): string {
  const sorted = ordered(waits, now);
  const named = sorted.slice(0, MAX_NAMED).map((w) => `${w.pod} on ${w.hook} for ${waitedText(waitedMs(w, now))} (since ${w.since})`);
  const more = sorted.length > MAX_NAMED ? `, and ${sorted.length - MAX_NAMED} more` : '';
  const count = sorted.length === 1 ? '1 pod waits' : `${sorted.length} pods wait`;
  return `${count} for lifecycle hook handlers to be removed: ${named.join(', ')}${more}`;
}

/** Time until the first wait passes its next step. */
function nextStepWait(waits: readonly HookWait[], now: Date): Wait | undefined {
  let soonest = Number.POSITIVE_INFINITY;
  for (const w of waits) {
    const ms = waitedMs(w, now);
    const next = WAIT_STEPS_S.find((s) => s * 1000 > ms);
    if (next !== undefined) soonest = Math.min(soonest, next * 1000 - ms);
  }
  return Number.isFinite(soonest) ? { reason: LIFECYCLE_WAIT, afterMs: soonest } : undefined;
}

interface LifecycleReport {
  status: AppStatus;
  event?: EventSpec | undefined;
  wait?: Wait | undefined;
}

/**
 * `status` with LifecycleHookWaiting brought up to date against `previous` (the conditions as the App had
 * them). Without waits and without the condition, nothing changes (no condition on Apps that never waited).
 */
function withLifecycleWaiting(
  status: AppStatus,
  waits: readonly HookWait[],
  previous: readonly Condition[] | undefined,
  generation: number | undefined,
  now: Date,
): LifecycleReport {
  const before = findCondition(previous, ConditionType.lifecycleHookWaiting);
  if (waits.length === 0) {
    if (before?.status !== 'True') return { status };
    const condition = {
      type: ConditionType.lifecycleHookWaiting,
      status: 'False' as const,
      reason: Reason.noHookPending,
      message: 'no pod waits on a lifecycle hook',
    };
    return { status: { ...status, conditions: setCondition(status.conditions, condition, now, generation) } };
  }
  const first = ordered(waits, now)[0];
  const reason = first ? REASONS[first.hook] : Reason.waitingForPreDelete;
  const message = waitingMessage(waits, now);
  const condition = { type: ConditionType.lifecycleHookWaiting, status: 'True' as const, reason, message };
  const next = { ...status, conditions: setCondition(status.conditions, condition, now, generation) };
  const changed = before?.status !== 'True' || before.message !== message;
  const late = first !== undefined && waitedMs(first, now) >= WAIT_STEPS_S[0] * 1000;
  const event: EventSpec | undefined = changed
    ? { type: late ? 'Warning' : 'Normal', reason: EventReason.lifecycleHookWaiting, action: 'Wait', message }
    : undefined;
  return { status: next, event, wait: nextStepWait(waits, now) };
}

/** What the lifecycle hooks add to a plan: LifecycleHookWaiting in its status, an Event, and the timer for the next step. */
export interface LifecycleContribution {
  /** The status with LifecycleHookWaiting brought up to date (the same in every view of the status). */
  apply(status: AppStatus): AppStatus;
  event: EventSpec | undefined;
  wait: Wait | undefined;
}

/** The lifecycle hooks' part of a plan, or undefined for an App without hooks that never waited on one. */
export function lifecycleReport(app: Stored<App>, owned: readonly Stored<Pod>[], now: Date): LifecycleContribution | undefined {
  const lifecycle = lifecycleOf(app);
  const previous = app.status?.conditions;
  if (!lifecycle && findCondition(previous, ConditionType.lifecycleHookWaiting) === undefined) return undefined;
  const waits = hookWaits(lifecycle, owned, now);
  const generation = app.metadata.generation;
  // The Event and the timer depend on the waits and the conditions as read, not on the status they go in.
  const { event, wait } = withLifecycleWaiting({}, waits, previous, generation, now);
  return { apply: (status) => withLifecycleWaiting(status, waits, previous, generation, now).status, event, wait };
}
