/** Pure: what ebb does next and when, from a plan made read-only now, the App's timers and its pending job. */
import type { Action, DeleteCause } from '../../../workers/app/model/actions.ts';
import type { InPlaceStep } from '../../../workers/inplace/index.ts';
import type { Wait } from '../../../workers/types.ts';
import type { NextStep, QueueFacts } from './model.ts';

/** Timer reasons in words (a reason not listed is shown as it is). */
const TIMER_WORDS: Readonly<Record<string, string>> = {
  'canary-pause': 'the canary pause step ends',
  'min-ready-seconds': 'a pod becomes available (minReadySeconds)',
  'in-place-grace-period': 'an in-place grace period ends: the images are patched',
  'in-place-progress': 'an in-place update is checked again',
  'in-place-pod-terminating': 'a terminating pod is checked again',
  'lifecycle-hook': 'a lifecycle hook wait passes its next step (the condition is updated)',
  'progress-deadline': 'the progress deadline is checked',
  'prewarm-retry': 'failed pre-warm writes are tried again',
  'pvc-terminating': 'a terminating claim is checked again',
  'retry-after-giving-up': 'a reconcile that gave up is tried again',
};

export const timerWords = (reason: string): string => TIMER_WORDS[reason] ?? reason;

function inPlaceWords(s: InPlaceStep): string {
  if (s.kind === 'start') return 'start its in-place update';
  if (s.kind === 'patchSpec') return `patch the images of batch ${s.batch + 1}`;
  if (s.kind === 'resize') return 'resize its containers';
  if (s.kind === 'gate') return `set gate InPlaceUpdateReady ${s.condition.status} (${s.condition.reason ?? ''})`;
  if (s.kind === 'finish') return 'finish its in-place update (gate InPlaceUpdateReady True)';
  return s.kind;
}

const DELETE_WHY: Readonly<Record<DeleteCause, string>> = {
  condemned: 'scale down',
  failed: 'replace the failed pod',
  update: 'recreate it at the update revision',
  reserved: 'its ordinal is reserved',
  specified: 'it is labelled for deletion',
};

function deleteWords(a: Extract<Action, { kind: 'deletePod' }>, held: boolean): string {
  const text = `delete ${a.name} (${DELETE_WHY[a.cause]})`;
  return held && a.replacement ? `${text}: not done while the rollout is held (the dry run refuses the replacement)` : text;
}

function otherWords(a: Action): string | undefined {
  if (a.kind === 'createPvc') return `create claim ${a.pvc.metadata.name}`;
  if (a.kind === 'expandPvc') return `grow claim ${a.name} to ${a.storage} before ${a.pod} is updated`;
  if (a.kind === 'requestPrewarm') return `pre-warm: ask node ${a.node} to pull ${a.images.length} image${a.images.length === 1 ? '' : 's'}`;
  if (a.kind === 'removePrewarm') return `pre-warm: clear the entries on node ${a.node}`;
  return undefined;
}

/** One action in words, or undefined for those not worth a line (Events, revision bookkeeping). */
export function describeAction(a: Action, held: boolean): string | undefined {
  switch (a.kind) {
    case 'createPod':
      return `create ${a.pod.metadata.name} at revision ${a.revision}`;
    case 'deletePod':
      return deleteWords(a, held);
    case 'inPlaceStep':
      return `${a.name}: ${inPlaceWords(a.step)}`;
    case 'markGateReady':
      return `${a.name}: set the InPlaceUpdateReady gate True`;
    case 'podLifecycle':
      return `${a.name}: move to lifecycle state ${a.state}`;
    case 'pauseRollout':
      return `pause the rollout (canary step ${a.step + 1})`;
    default:
      return otherWords(a);
  }
}

/** The pod an action is about, if any. */
export function actionPod(a: Action): string | undefined {
  if (a.kind === 'createPod') return a.pod.metadata.name;
  if (a.kind === 'deletePod' || a.kind === 'inPlaceStep' || a.kind === 'markGateReady' || a.kind === 'podLifecycle') return a.name;
  if (a.kind === 'expandPvc') return a.pod;
  return undefined;
}

const MAX_PLAN_LINES = 6;

/**
 * The next steps, soonest first: a job waiting or running, the plan's writes (now), the plan's wait and the
 * timers (at their time). `held`: the RolloutHeld condition is True (a delete that recreates is not done).
 */
export function nextSteps(
  plan: { actions: readonly Action[]; wait?: Wait | undefined } | undefined,
  queue: QueueFacts | undefined,
  held: boolean,
  now: Date,
): NextStep[] {
  const out: NextStep[] = [];
  if (queue?.pending)
    out.push({ what: `a reconcile is ${queue.pending.state === 'active' ? 'running' : 'queued'} (job ${queue.pending.jobId})`, source: 'queue' });
  const lines = (plan?.actions ?? []).map((a) => describeAction(a, held)).filter((l): l is string => l !== undefined);
  for (const what of lines.slice(0, MAX_PLAN_LINES)) out.push({ what, source: 'plan' });
  if (lines.length > MAX_PLAN_LINES) out.push({ what: `and ${lines.length - MAX_PLAN_LINES} more writes`, source: 'plan' });
  const timers = [...(queue?.timers ?? [])].sort((a, b) => a.dueAt - b.dueAt);
  for (const t of timers) out.push({ at: new Date(t.dueAt).toISOString(), what: `timer ${t.reason}: ${timerWords(t.reason)}`, source: 'timer' });
  const wait = plan?.wait;
  // The plan's wait is set as a timer by the reconcile that makes it; shown when no timer of that reason is seen.
  if (wait && !timers.some((t) => t.reason === wait.reason))
    out.push({ at: new Date(now.getTime() + Math.max(0, wait.afterMs)).toISOString(), what: `look again: ${timerWords(wait.reason)}`, source: 'plan' });
  return out;
}
