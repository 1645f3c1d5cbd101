/**
 * The per-pod in-place update protocol as a pure step function: from the pod as read, the
 * target and the time, the one next write (or wait). Progress lives on the pod only — the state annotation, the
 * gate condition, the spec and the revision label — so a step computed by any worker after a crash continues
 * where the last write left off. The executor (`executor.ts`) performs one step per call.
 *
 *   start ─▶ wait (grace period) ─▶ resize ─▶ patchSpec(batch 0) ─▶ waitRunning ─▶ patchSpec(batch 1) … ─▶ finish ─▶ done
 *
 * After the last batch's patch, once the kubelet has observed it, a `gate` step sets the gate True while the
 * containers restart (`early-gate.ts`); the finish then only removes the state annotation.
 *
 * A change that restarts nothing (labels/annotations only, or a resize no container's resizePolicy restarts
 * for) skips the gate: resize, then one patchSpec with the revision label and the metadata, then done.
 */
import { Annotation, Label, Reason } from '../../api/keys.ts';
import { batchPending, resizePending, resizeRefusal, updatePending, type Pending } from './completion.ts';
import { earlyGate } from './early-gate.ts';
import { createdGateCondition, gateCondition, gateConditionFor, hasInPlaceGate } from './gate.ts';
import { sameQuantity, sameResizable, RESIZABLE } from '../../common/quantity.ts';
import { findContainer, hasStateAnnotation, newState, podRevision, readState, refreshSnapshot, serializeState, type InPlaceState } from './state.ts';
import type { InPlacePlan, InPlaceTarget } from './types.ts';
import { baselineAtFinish, baselineNow, serializeBaseline } from './restart-baseline.ts';
import type { Pod, PodCondition, ResourceRequirements } from '../../kube/types.ts';

/** Re-check interval while waiting for something a pod watch event reports anyway (the timer is a safety net). */
export const SAFETY_RECHECK_MS = 30_000;

/** The reason of the `wait` step of a grace period. */
const GRACE_PERIOD = 'InPlaceGracePeriod';

/**
 * Timer reasons (the queue's timer ids take short lowercase words): one for the end of a grace period, one for
 * the safety re-check while containers restart, one while the pod terminates.
 */
export const GRACE_PERIOD_WAIT = 'in-place-grace-period';
export const PROGRESS_WAIT = 'in-place-progress';
const TERMINATING_WAIT = 'in-place-pod-terminating';

export type InPlaceStep =
  /** Write the state annotation and gate condition False (one pods/status patch). */
  | { kind: 'start'; state: InPlaceState; annotation: string; condition: PodCondition }
  /** Nothing to write before `afterMs` (the grace period): return it as a timer. */
  | { kind: 'wait'; reason: string; afterMs: number }
  /** Patch containers' cpu/memory through pods/resize. */
  | { kind: 'resize'; containers: { name: string; resources: ResourceRequirements }[] }
  /**
   * Patch the images of batch `batch` (JSON patch with a resourceVersion precondition), with the updated state
   * annotation; on the last batch also the revision label and the template's label/annotation changes.
   */
  | {
      kind: 'patchSpec';
      batch: number;
      images: { container: string; image: string; init?: boolean }[];
      labels: Record<string, string | null>;
      annotations: Record<string, string | null>;
      revisionLabel?: string;
      annotation?: string;
    }
  /** Containers are restarting or not ready yet: the pod's status change will bring the next reconcile. */
  | { kind: 'waitRunning'; reason: string; container: string; afterMs: number }
  /**
   * The kubelet refused the resize (PodResizeInProgress reason Error): nothing to write; the App planner
   * recreates the pod or holds the rollout on it, by its podUpdatePolicy.
   */
  | { kind: 'resizeRefused'; container: string; message: string }
  /** Set the gate condition alone (the early release, or holding it False again); the state annotation stays. */
  | { kind: 'gate'; condition: PodCondition }
  /** Remove the state annotation and set the gate True (one pods/status patch); `baseline`: the restart baseline to write. */
  | { kind: 'finish'; removeAnnotation: boolean; condition: PodCondition; baseline?: string }
  | { kind: 'done' };

const PROTECTED_LABELS = new Set<string>([Label.app, Label.revision, Label.controllerRevisionHash, Label.podIndex, Label.podName]);
const PROTECTED_ANNOTATIONS = new Set<string>([Annotation.inPlaceUpdateState, Annotation.restartBaseline]);

/** The part of a template metadata patch that still changes the pod; ebb's own keys are never touched. */
function effectivePatch(current: Record<string, string> | undefined, patch: Record<string, string | null>, keep: Set<string>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (keep.has(k)) continue;
    if (v === null ? current?.[k] !== undefined : current?.[k] !== v) out[k] = v;
  }
  return out;
}

function metadataOf(pod: Pod, plan: InPlacePlan): Pick<Extract<InPlaceStep, { kind: 'patchSpec' }>, 'labels' | 'annotations'> {
  return {
    labels: effectivePatch(pod.metadata.labels, plan.metadata.labels, PROTECTED_LABELS),
    annotations: effectivePatch(pod.metadata.annotations, plan.metadata.annotations, PROTECTED_ANNOTATIONS),
  };
}

/** Resize targets the pod's spec does not have yet. */
function pendingResizes(pod: Pod, targets: Iterable<[string, ResourceRequirements]>): { name: string; resources: ResourceRequirements }[] {
  const out: { name: string; resources: ResourceRequirements }[] = [];
  for (const [name, resources] of targets) {
    const c = findContainer(pod, name);
    if (c && !c.init && !sameResizable(c.spec.resources, resources)) out.push({ name, resources });
  }
  return out;
}

/** A resize of `to` restarts the container when its resizePolicy says RestartContainer for a changed resource. */
function resizeRestarts(pod: Pod, name: string, to: ResourceRequirements): boolean {
  const spec = findContainer(pod, name)?.spec;
  return RESIZABLE.some((r) => {
    const changed = !sameQuantity(spec?.resources?.requests?.[r], to.requests?.[r]) || !sameQuantity(spec?.resources?.limits?.[r], to.limits?.[r]);
    return changed && spec?.resizePolicy?.some((p) => p.resourceName === r && p.restartPolicy === 'RestartContainer') === true;
  });
}

function needsRestart(pod: Pod, plan: InPlacePlan): boolean {
  const image = plan.images.some((i) => {
    const c = findContainer(pod, i.container);
    return c !== undefined && c.spec.image !== i.image && !(c.init && c.spec.restartPolicy !== 'Always');
  });
  return (
    image ||
    pendingResizes(
      pod,
      plan.resources.map((r) => [r.container, r.resources]),
    ).some((r) => resizeRestarts(pod, r.name, r.resources))
  );
}

function waitRunning(pod: Pod, p: NonNullable<Pending>): InPlaceStep {
  if (p.reason === 'ResizeRefused') return { kind: 'resizeRefused', container: p.container, message: resizeRefusal(pod) ?? '' };
  return { kind: 'waitRunning', reason: p.reason, container: p.container, afterMs: SAFETY_RECHECK_MS };
}

function startStep(pod: Pod, target: InPlaceTarget, now: Date, prior: InPlaceState | undefined): InPlaceStep {
  const fresh = newState(pod, target, now, prior);
  // Taking over from a superseded update while the gate is already False: its grace period already ran.
  const alreadyOut = prior !== undefined && gateCondition(pod)?.status === 'False';
  const state = alreadyOut ? { ...fresh, startedAt: prior.startedAt } : fresh;
  const condition = gateConditionFor(pod, 'False', Reason.startInPlaceUpdate, `in-place update to revision ${target.revision}`, now);
  return { kind: 'start', state, annotation: serializeState(state), condition };
}

function patchBatch(pod: Pod, state: InPlaceState, target: InPlaceTarget, index: number, now: Date): InPlaceStep {
  const names = (state.batches[index] ?? []).filter((c) => findContainer(pod, c) !== undefined);
  const images = names.map((c) => ({ container: c, image: state.newImages[c] ?? '', ...(findContainer(pod, c)?.init ? { init: true } : {}) }));
  const next: InPlaceState = { ...refreshSnapshot(state, pod, names), batch: index, patchedAt: [...state.patchedAt.slice(0, index), now.toISOString()] };
  const last = index === state.batches.length - 1;
  const metadata = last ? metadataOf(pod, target.plan) : { labels: {}, annotations: {} };
  return { kind: 'patchSpec', batch: index, images, ...metadata, ...(last ? { revisionLabel: state.revision } : {}), annotation: serializeState(next) };
}

function finish(pod: Pod, removeAnnotation: boolean, now: Date, state?: InPlaceState): InPlaceStep {
  const condition = gateConditionFor(pod, 'True', Reason.inPlaceUpdateDone, 'in-place update done', now);
  return { kind: 'finish', removeAnnotation, condition, ...(state ? { baseline: serializeBaseline(baselineAtFinish(pod, state)) } : {}) };
}

function continueUpdate(pod: Pod, state: InPlaceState, target: InPlaceTarget, now: Date): InPlaceStep {
  if (state.batch < 0) {
    const graceEnd = Date.parse(state.startedAt) + Math.max(0, target.gracePeriodSeconds) * 1000;
    if (now.getTime() < graceEnd) return { kind: 'wait', reason: GRACE_PERIOD, afterMs: graceEnd - now.getTime() };
  }
  const resizes = pendingResizes(pod, Object.entries(state.resources));
  if (resizes.length > 0) return { kind: 'resize', containers: resizes };
  const next = state.batch + 1;
  if (next < state.batches.length) {
    const pending = state.batch >= 0 ? batchPending(pod, state, state.batch) : undefined;
    return pending ? waitRunning(pod, pending) : patchBatch(pod, state, target, next, now);
  }
  const pending = updatePending(pod, state);
  if (!pending) return finish(pod, true, now, state);
  const gate = pending.reason === 'ResizeRefused' ? undefined : earlyGate(pod, state, pending, now);
  return gate ? { kind: 'gate', condition: gate } : waitRunning(pod, pending);
}

/**
 * Resize (if needed) and wait until the kubelet has actuated it, then label, metadata and the images of
 * regular init containers (which do not run again in a running pod) in one patch: nothing restarts, so the
 * gate stays True. A resize the kubelet refuses never gets the revision label.
 */
function lightStep(pod: Pod, target: InPlaceTarget): InPlaceStep {
  const resizes = pendingResizes(
    pod,
    target.plan.resources.map((r) => [r.container, r.resources]),
  );
  if (resizes.length > 0) return { kind: 'resize', containers: resizes };
  for (const { container } of target.plan.resources) {
    const pending = findContainer(pod, container)?.init ? undefined : resizePending(pod, container);
    if (pending) return waitRunning(pod, pending);
  }
  const images = target.plan.images.filter(
    (i) => findContainer(pod, i.container)?.spec.image !== undefined && findContainer(pod, i.container)?.spec.image !== i.image,
  );
  const metadata = metadataOf(pod, target.plan);
  // Nothing restarts: the counts as they are are the pod's baseline at the new revision.
  const annotations = { ...metadata.annotations, [Annotation.restartBaseline]: serializeBaseline(baselineNow(pod, target.revision)) };
  return { kind: 'patchSpec', batch: 0, images, labels: metadata.labels, annotations, revisionLabel: target.revision };
}

/**
 * The next step moving `pod` to `target`. Pass the plan diffed from the template of the pod's revision label;
 * once the pod carries the target revision label (its last batch is patched) the plan is no longer read, so
 * `EMPTY_PLAN` will do. Pods with the state annotation must be driven to `done` even when their label already
 * equals the update revision.
 */
export function nextInPlaceStep(pod: Pod, target: InPlaceTarget, now: Date): InPlaceStep {
  if (pod.metadata.deletionTimestamp) return { kind: 'wait', reason: 'PodTerminating', afterMs: SAFETY_RECHECK_MS };
  const state = readState(pod);
  if (state?.revision === target.revision) return continueUpdate(pod, state, target, now);
  const annotated = hasStateAnnotation(pod);
  if (!annotated && podRevision(pod) === target.revision) {
    if (!hasInPlaceGate(pod) || gateCondition(pod)?.status === 'True') return { kind: 'done' };
    // A new pod whose gate was never set (markGateReady did not run), or a gate left False without a state.
    return gateCondition(pod) ? finish(pod, false, now) : { kind: 'finish', removeAnnotation: false, condition: createdGateCondition(pod, now) };
  }
  if (!annotated && !needsRestart(pod, target.plan)) return lightStep(pod, target);
  return startStep(pod, target, now, state);
}

/** The timer a step asks for (`wait`, `waitRunning`), in the worker's "not yet" shape, with a timer reason. */
export function stepWait(step: InPlaceStep): { reason: string; afterMs: number } | undefined {
  if (step.kind === 'waitRunning') return { reason: PROGRESS_WAIT, afterMs: step.afterMs };
  if (step.kind !== 'wait') return undefined;
  return { reason: step.reason === GRACE_PERIOD ? GRACE_PERIOD_WAIT : TERMINATING_WAIT, afterMs: step.afterMs };
}

/**
 * Whether `step` completes an in-place update: the finish, or the one patch of an update that restarts
 * nothing. The App executor logs it; no Event per pod (a fifth write per pod updated in place): the rollout's
 * end is one Event, and each pod's gate condition says when it was done.
 */
export function completesUpdate(step: InPlaceStep): boolean {
  if (step.kind === 'finish') return step.removeAnnotation;
  return step.kind === 'patchSpec' && step.revisionLabel !== undefined && step.annotation === undefined;
}
