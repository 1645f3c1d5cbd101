/** Pure: what one pod of the App waits for (a hook, readiness, its in-place step, the dry run's refusal, a pull, its turn). */
import type { App } from '../../../api/app.ts';
import { ConditionType, Reason } from '../../../api/keys.ts';
import type { ContainerStatus, Pod, Stored } from '../../../kube/types.ts';
import { inPlaceStatus, podIsUpdatingInPlace, readState } from '../../../workers/inplace/index.ts';
import { hookWaits } from '../../../workers/app/lifecycle/hooks.ts';
import { availableAtMs, getOrdinal, getPodRevision, isRunningAndReady, readyCondition } from '../../../workers/app/pods/predicates.ts';
import { rolloutSettings } from '../../../workers/app/model/rollout-settings.ts';
import type { NodePrewarm, WaitItem } from './model.ts';

/** What the pod rows need of the App, computed once. */
export interface PodContext {
  app: App;
  now: Date;
  update: string | undefined;
  current: string | undefined;
  partition: number;
  /** The rollout waits as a whole (paused, a canary pause): outdated pods wait for it, not for their turn. */
  rolloutWait: string | undefined;
  /** RolloutHeld's or InPlaceFallback's refusal, when True: the pods its message names wait for a fix. */
  refusals: readonly { kind: string; message: string }[];
  /** Pre-warm by node. */
  prewarm: ReadonlyMap<string, NodePrewarm>;
  /** Pods the plan made now writes to: they do not wait for their turn, it is now. */
  planned: ReadonlySet<string>;
}

const condition = (app: App, type: string) => app.status?.conditions?.find((c) => c.type === type && c.status === 'True');

/** The refusals that hold pods back: a dry run that refused the replacements, an in-place update refused. */
export function refusalsOf(app: App): { kind: string; message: string }[] {
  const out: { kind: string; message: string }[] = [];
  const held = condition(app, ConditionType.rolloutHeld);
  if (held) out.push({ kind: 'held', message: held.message ?? held.reason ?? '' });
  const fallback = condition(app, ConditionType.inPlaceFallback);
  if (fallback && (fallback.reason === Reason.inPlaceOnlyRefused || fallback.reason === Reason.resizeRefused))
    out.push({ kind: 'refused', message: fallback.message ?? fallback.reason ?? '' });
  return out;
}

/** A refusal as a pod row says it (the whole message is the rollout's wait, shown once). */
const REFUSAL_WORDS: Readonly<Record<string, string>> = {
  held: 'kept running: the dry run refuses its replacement (see WAITING FOR)',
  refused: 'its update is refused (see WAITING FOR)',
};

/** Whether `text` names pod `name` as a whole word (not web-1 inside web-10). */
export function names(text: string, name: string): boolean {
  return new RegExp(`(^|[^a-z0-9.-])${name.replace(/[.]/g, '\\.')}($|[^a-z0-9-])`).test(text);
}

function hookWait(ctx: PodContext, pod: Stored<Pod>): WaitItem | undefined {
  const wait = hookWaits(ctx.app.spec.lifecycle, [pod], ctx.now)[0];
  if (!wait) return undefined;
  const hook = ctx.app.spec.lifecycle?.[wait.hook];
  const labels = Object.entries(hook?.labelsHandler ?? {}).map(([k, v]) => `label ${k}=${v}`);
  const finalizers = (hook?.finalizersHandler ?? []).map((f) => `finalizer ${f}`);
  const handlers = [...labels, ...finalizers].join(', ');
  return { kind: 'hook', message: `lifecycle hook ${wait.hook} since ${wait.since}: waits until its handlers are removed (${handlers})` };
}

/** A started in-place update: in its grace period (until its end), or about to patch. */
function startingWait(ctx: PodContext, pod: Pod, revision: string | undefined): WaitItem {
  const grace = rolloutSettings(ctx.app).inPlaceGracePeriodSeconds;
  const end = Date.parse(readState(pod)?.startedAt ?? '') + grace * 1000;
  if (grace > 0 && end > ctx.now.getTime())
    return { kind: 'inPlace', message: `in-place update started; grace period of ${grace}s before the images are patched`, until: new Date(end).toISOString() };
  return { kind: 'inPlace', message: `in-place update starting (to ${revision ?? 'the update revision'})` };
}

function inPlaceWait(ctx: PodContext, pod: Pod): WaitItem | undefined {
  if (!podIsUpdatingInPlace(pod)) return undefined;
  const s = inPlaceStatus(pod);
  const batches = s.batches === undefined ? '' : `, batch ${Math.max(0, s.batchesPatched ?? 0)}/${s.batches}`;
  const waiting = s.waitingFor ? `${s.waitingFor.container} ${s.waitingFor.reason}` : 'not done';
  switch (s.phase) {
    case 'Starting':
      return startingWait(ctx, pod, s.revision);
    case 'Patching':
      return { kind: 'inPlace', message: `in-place update: patching containers by priority${batches}` };
    case 'Waiting':
      return { kind: 'inPlace', message: `in-place update: container ${waiting}${batches}` };
    default:
      return { kind: 'inPlace', message: 'in-place update done; the InPlaceUpdateReady gate is set next' };
  }
}

function availabilityWait(ctx: PodContext, pod: Pod): WaitItem[] {
  const minReady = ctx.app.spec.minReadySeconds ?? 0;
  const at = availableAtMs(pod, minReady);
  if (at === undefined || at <= ctx.now.getTime()) return [];
  return [{ kind: 'availability', message: `ready; available once ready for minReadySeconds ${minReady}`, until: new Date(at).toISOString() }];
}

function containerWhy(c: ContainerStatus): string {
  if (c.state.waiting?.reason) return c.state.waiting.reason;
  if (c.state.running) return 'running, readiness probe not passed';
  return c.state.terminated ? `terminated (${c.state.terminated.reason ?? 'exited'})` : 'not started';
}

function gateWaits(pod: Pod): WaitItem[] {
  return (pod.spec?.readinessGates ?? []).flatMap((gate) => {
    const c = pod.status?.conditions?.find((x) => x.type === gate.conditionType);
    if (c?.status === 'True') return [];
    const state = c ? `${c.status}${c.reason ? ` (${c.reason})` : ''}` : 'not set';
    return [{ kind: 'gate', message: `readiness gate ${gate.conditionType}: ${state}` }];
  });
}

/** Readiness: scheduling, containers not ready (and why), readiness gates not True, minReadySeconds. */
function readinessWaits(ctx: PodContext, pod: Pod): WaitItem[] {
  if (!pod.spec?.nodeName) return [{ kind: 'readiness', message: 'not scheduled to a node yet' }];
  if (isRunningAndReady(pod)) return availabilityWait(ctx, pod);
  const containers = (pod.status?.containerStatuses ?? [])
    .filter((c) => !c.ready)
    .map((c) => ({ kind: 'readiness', message: `container ${c.name}: ${containerWhy(c)}` }));
  const out: WaitItem[] = [...containers, ...gateWaits(pod)];
  if (out.length === 0) out.push({ kind: 'readiness', message: `not ready (${readyCondition(pod)?.reason ?? pod.status?.phase ?? 'Pending'})` });
  return out;
}

/**
 * For a pod still to update: what holds it back as the rollout goes (refusal, pull, pause, partition), else its
 * turn in the update order, unless it already waits for something of its own (`busy`: a hook, readiness) or
 * the plan acts on it now.
 */
function outdatedWaits(ctx: PodContext, pod: Stored<Pod>, ordinal: number, busy: boolean): WaitItem[] {
  const out: WaitItem[] = [];
  for (const r of ctx.refusals) if (names(r.message, pod.metadata.name)) out.push({ kind: r.kind, message: REFUSAL_WORDS[r.kind] ?? r.message });
  const node = pod.spec?.nodeName ? ctx.prewarm.get(pod.spec.nodeName) : undefined;
  if (node && node.state !== 'Pulled')
    out.push({ kind: 'prewarm', message: `pre-warm on ${node.node}: ${node.state}, ${node.pulled}/${node.images.length || '?'} images pulled` });
  if (ordinal < ctx.partition) out.push({ kind: 'partition', message: `below the partition (${ctx.partition}): stays at the current revision` });
  else if (ctx.rolloutWait) out.push({ kind: 'turn', message: ctx.rolloutWait });
  else if (out.length === 0 && !busy && !ctx.planned.has(pod.metadata.name)) out.push({ kind: 'turn', message: 'waits its turn in the update order' });
  return out;
}

/** Everything pod `pod` waits for, in the order it matters: going away, hook, in-place, readiness, its update. */
export function podWaits(ctx: PodContext, pod: Stored<Pod>): WaitItem[] {
  if (pod.metadata.deletionTimestamp) return [{ kind: 'terminating', message: `terminating since ${pod.metadata.deletionTimestamp}` }];
  const out: WaitItem[] = [];
  const hook = hookWait(ctx, pod);
  if (hook) out.push(hook);
  const inPlace = inPlaceWait(ctx, pod);
  if (inPlace) out.push(inPlace);
  out.push(...readinessWaits(ctx, pod).filter((w) => !(inPlace && w.kind === 'gate')));
  const revision = getPodRevision(pod);
  if (ctx.update && revision !== ctx.update && !inPlace)
    out.push(...outdatedWaits(ctx, pod, getOrdinal(ctx.app.metadata.name ?? '', pod.metadata.name), out.length > 0));
  return out;
}

/** `update`, `current`, or the revision's own name. */
export function revisionMark(ctx: Pick<PodContext, 'update' | 'current'>, pod: Pod): string {
  const revision = getPodRevision(pod) ?? '';
  if (revision !== '' && revision === ctx.update) return 'update';
  if (revision !== '' && revision === ctx.current) return 'current';
  return revision || '-';
}
