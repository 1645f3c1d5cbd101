/**
 * The pure step planner of the simulated kubelet: given the pod as the apiserver shows it, the simulated
 * runtime and the time, the one next thing to do — or how long nothing needs doing. The pod worker executes
 * steps one at a time and re-plans after each, so a change of the pod (image patch, resize, deletion) is
 * acted on at the next step, like the kubelet's computePodActions on every sync.
 */
import { nextStatusChange } from './container-status.ts';
import type { Container, Pod, ResourceList, ResourceRequirements } from '../../../src/kube/types.ts';
import { isSidecar, pullRetryAt, restartDueAt, shouldRestart, type ContainerKind } from './policy.ts';
import { effectiveRequests, milli, RESIZABLE, sameQuantities, sumMilli } from './quantity.ts';
import { resizeActuationError } from './resize-refusal.ts';
import type { ContainerRuntime, PodRuntime, ResizeVerdict } from './runtime.ts';
import type { KubeletTimings } from './timings.ts';

export type RestartCause = 'definitionChanged' | 'resize';

export type Step =
  /** Stop every container (charging the grace period), post the final status, delete the pod. */
  | { kind: 'terminate' }
  /** Wait for the pod's PVCs to be Bound, then charge the attach delay. */
  | { kind: 'mountVolumes'; claims: string[] }
  | { kind: 'createSandbox' }
  /** Pull (per policy) and start a container; a running instance is stopped first (`restart`). */
  | { kind: 'startContainer'; container: Container; containerKind: ContainerKind; restart?: RestartCause; resources: ResourceRequirements }
  /** The container's simulated process exits now. */
  | { kind: 'containerExited'; container: string; exitCode: number }
  /** Admit a resize: allocated resources become the spec's. */
  | { kind: 'allocateResize'; container: string; resources: ResourceRequirements }
  /** Apply allocated resources to a running container without a restart. */
  | { kind: 'actuateResize'; container: string }
  /** Record (or clear) a resize the node cannot admit now. */
  | { kind: 'resizePending'; verdict: ResizeVerdict | undefined }
  /** Nothing to do until `untilMs` (if set) or until the pod changes. */
  | { kind: 'wait'; untilMs?: number };

export interface NodeCapacityView {
  allocatable: ResourceList;
  /** Requests allocated to the node's other pods. */
  otherPodsRequests: ResourceList[];
}

export interface PlanInput {
  pod: Pod;
  runtime: PodRuntime;
  now: number;
  timings: KubeletTimings;
  node: NodeCapacityView;
}

/** How often a Deferred resize is re-evaluated. */
export const DEFERRED_RESIZE_RECHECK_MS = 1_000;

type Outcome = { step: Step } | { wakeAt: number | undefined };

function resourcesOf(c: Container): ResourceRequirements {
  return c.resources ?? {};
}

export function sameResources(a: ResourceRequirements, b: ResourceRequirements): boolean {
  return sameQuantities(a.requests, b.requests, RESIZABLE) && sameQuantities(a.limits, b.limits, RESIZABLE);
}

/** Upstream resize admission, reduced to cpu and memory requests against node allocatable. */
export function admitResize(pod: Pod, node: NodeCapacityView): ResizeVerdict | undefined {
  const desired = sumMilli(pod.spec.containers.map(effectiveRequests), RESIZABLE);
  const others = sumMilli(node.otherPodsRequests, RESIZABLE);
  for (const r of RESIZABLE) {
    const capacity = milli(node.allocatable[r]);
    const want = desired[r] ?? 0;
    const used = others[r] ?? 0;
    const unit = (v: number): number => (r === 'cpu' ? v : Math.round(v / 1000));
    if (want > capacity)
      return { reason: 'Infeasible', message: `Node didn't have enough capacity: ${r}, requested: ${unit(want)}, capacity: ${unit(capacity)}` };
    if (want + used > capacity) {
      return {
        reason: 'Deferred',
        message: `Node didn't have enough resource: ${r}, requested: ${unit(want)}, used: ${unit(used)}, capacity: ${unit(capacity)}`,
      };
    }
  }
  return undefined;
}

/** A resize of these resources needs a restart when the container's resizePolicy says RestartContainer. */
export function resizeNeedsRestart(c: Container, from: ResourceRequirements, to: ResourceRequirements): boolean {
  return RESIZABLE.some((r) => {
    const changed = !sameQuantities(from.requests, to.requests, [r]) || !sameQuantities(from.limits, to.limits, [r]);
    const policy = c.resizePolicy?.find((p) => p.resourceName === r)?.restartPolicy;
    return changed && policy === 'RestartContainer';
  });
}

/**
 * A new container instance gets the spec's resources (the kubelet admits them on start), except while a
 * resize of the pod is pending, when it keeps what was allocated.
 */
function start(c: Container, kind: ContainerKind, cr: ContainerRuntime | undefined, rt: PodRuntime, restart?: RestartCause): Outcome {
  const resources = rt.resizePending && cr ? cr.allocated : resourcesOf(c);
  return { step: { kind: 'startContainer', container: c, containerKind: kind, resources, ...(restart ? { restart } : {}) } };
}

/** A container with no running instance: start it unless a pull or crash back-off holds it. */
function planNotRunning(pod: Pod, c: Container, kind: ContainerKind, cr: ContainerRuntime | undefined, input: PlanInput): Outcome {
  if (cr?.pullFailure) {
    if (cr.pullFailure.reason === 'InvalidImageName' || cr.pullFailure.reason === 'ErrImageNeverPull') {
      // Retried only when the spec changes (a new image), as the kubelet does on its next sync.
      return cr.pullFailure.image === c.image ? { wakeAt: undefined } : start(c, kind, cr, input.runtime);
    }
    const retryAt = pullRetryAt(cr.pullFailure, input.timings);
    if (input.now >= retryAt || cr.pullFailure.image !== c.image) return start(c, kind, cr, input.runtime);
    return { wakeAt: earliest([retryAt, nextStatusChange(cr, input.now, input.timings)]) };
  }
  if (cr?.phase.kind === 'terminated') {
    if (!shouldRestart(pod, kind, cr.phase.termination.exitCode)) return { wakeAt: undefined };
    const due = restartDueAt(cr, input.timings) ?? input.now;
    return input.now >= due ? start(c, kind, cr, input.runtime) : { wakeAt: due };
  }
  return start(c, kind, cr, input.runtime);
}

function planResize(c: Container, cr: ContainerRuntime, input: PlanInput): Outcome | undefined {
  const desired = resourcesOf(c);
  if (!sameResources(desired, cr.allocated)) {
    const verdict = admitResize(input.pod, input.node);
    if (verdict) {
      const same = input.runtime.resizePending?.reason === verdict.reason && input.runtime.resizePending.message === verdict.message;
      return same ? { wakeAt: input.now + DEFERRED_RESIZE_RECHECK_MS } : { step: { kind: 'resizePending', verdict } };
    }
    return { step: { kind: 'allocateResize', container: c.name, resources: desired } };
  }
  if (!sameResources(cr.allocated, cr.actual) || JSON.stringify(cr.allocated) !== JSON.stringify(cr.actual)) {
    if (resizeNeedsRestart(c, cr.actual, cr.allocated)) return start(c, 'regular', cr, input.runtime, 'resize');
    // Refused by the runtime: the kubelet retries on its next sync, which a change of the pod brings.
    if (resizeActuationError(cr) !== undefined) return { wakeAt: undefined };
    return { step: { kind: 'actuateResize', container: c.name } };
  }
  return undefined;
}

/** A long-running container (regular or sidecar). */
function planLongRunning(pod: Pod, c: Container, kind: ContainerKind, cr: ContainerRuntime | undefined, input: PlanInput): Outcome {
  if (cr?.phase.kind !== 'running' || cr.pullFailure) return planNotRunning(pod, c, kind, cr, input);
  const running = cr.phase;
  if (running.exitAt !== undefined && input.now >= running.exitAt) {
    return { step: { kind: 'containerExited', container: c.name, exitCode: running.exitCode ?? 0 } };
  }
  if (c.image !== cr.image) return start(c, kind, cr, input.runtime, 'definitionChanged');
  const resize = kind === 'regular' ? planResize(c, cr, input) : undefined;
  if (resize && 'step' in resize) return resize;
  const times = [resize && 'wakeAt' in resize ? resize.wakeAt : undefined, running.exitAt, nextStatusChange(cr, input.now, input.timings)];
  return { wakeAt: earliest(times) };
}

/** A regular init container: runs to completion, once. */
function planInit(pod: Pod, c: Container, cr: ContainerRuntime | undefined, input: PlanInput): Outcome | 'done' {
  if (cr?.phase.kind === 'terminated' && cr.phase.termination.exitCode === 0 && !cr.pullFailure) return 'done';
  if (cr?.phase.kind === 'running' && !cr.pullFailure) {
    const exitAt = cr.phase.exitAt ?? input.now;
    if (input.now >= exitAt) return { step: { kind: 'containerExited', container: c.name, exitCode: cr.phase.exitCode ?? 0 } };
    return { wakeAt: exitAt };
  }
  return planNotRunning(pod, c, 'init', cr, input);
}

function earliest(times: (number | undefined)[]): number | undefined {
  const defined = times.filter((t): t is number => t !== undefined);
  return defined.length > 0 ? Math.min(...defined) : undefined;
}

interface InitOutcome {
  step?: Step;
  wakeAt: number | undefined;
  /** Every regular init container completed and every sidecar started (or the regular containers already ran). */
  initialized: boolean;
}

function planInitContainers(input: PlanInput): InitOutcome {
  const { pod, runtime: rt } = input;
  const ran = regularsStarted(input);
  const wakes: (number | undefined)[] = [];
  for (const c of pod.spec.initContainers ?? []) {
    const cr = rt.containers[c.name];
    if (isSidecar(c)) {
      const o = planLongRunning(pod, c, 'sidecar', cr, input);
      if ('step' in o) return { step: o.step, wakeAt: undefined, initialized: false };
      wakes.push(o.wakeAt);
      // The next init container starts once this sidecar is started (its startup probe passed).
      const started = cr?.phase.kind === 'running' && input.now >= cr.phase.startedProbeAt;
      if (!started && !ran) return { wakeAt: earliest(wakes), initialized: false };
      continue;
    }
    if (ran && isInitDone(cr)) continue;
    const o = planInit(pod, c, cr, input);
    if (o === 'done') continue;
    if ('step' in o) return { step: o.step, wakeAt: undefined, initialized: false };
    return { wakeAt: o.wakeAt, initialized: false };
  }
  return { wakeAt: earliest(wakes), initialized: true };
}

function regularsStarted(input: PlanInput): boolean {
  return input.pod.spec.containers.some((c) => (input.runtime.containers[c.name]?.created ?? 0) > 0);
}

function claimsOf(pod: Pod): string[] {
  return (pod.spec.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : []));
}

/** Steps of the pod-level lifecycle that come before any container: deletion, volumes, sandbox. */
function podLevelStep(input: PlanInput): Step | undefined {
  const { pod, runtime: rt } = input;
  if (pod.metadata.deletionTimestamp) return { kind: 'terminate' };
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return { kind: 'wait' };
  if (rt.volumesReadyAt === undefined) return { kind: 'mountVolumes', claims: claimsOf(pod) };
  if (!rt.sandbox) return { kind: 'createSandbox' };
  return undefined;
}

/** The next step for a pod bound to this node. */
export function nextStep(input: PlanInput): Step {
  const { pod, runtime: rt } = input;
  const podStep = podLevelStep(input);
  if (podStep) return podStep;
  const init = planInitContainers(input);
  if (init.step) return init.step;
  if (!init.initialized) return wait(init.wakeAt);
  const wakes: (number | undefined)[] = [init.wakeAt];
  let pendingResize = false;
  for (const c of pod.spec.containers) {
    const cr = rt.containers[c.name];
    if (cr && !sameResources(resourcesOf(c), cr.allocated)) pendingResize = true;
    const o = planLongRunning(pod, c, 'regular', cr, input);
    if ('step' in o) return o.step;
    wakes.push(o.wakeAt);
  }
  if (!pendingResize && rt.resizePending) return { kind: 'resizePending', verdict: undefined };
  return wait(earliest(wakes));
}

function isInitDone(cr: ContainerRuntime | undefined): boolean {
  return cr?.phase.kind === 'terminated' && cr.phase.termination.exitCode === 0;
}

function wait(untilMs: number | undefined): Step {
  return untilMs === undefined ? { kind: 'wait' } : { kind: 'wait', untilMs };
}
