/**
 * The pure pod status builder: from the pod (spec and the conditions other owners wrote), the simulated
 * runtime and the time, the status a kubelet would post — phase, its own conditions, container statuses,
 * IPs. Modelled on the kubelet's generateAPIPodStatus / getPhase and status/generate.go.
 */
import { buildContainerStatus, type ContainerStatusContext } from './container-status.ts';
import type { Container, ContainerStatus, Pod, PodCondition, PodStatus } from '../../../src/kube/types.ts';
import { rfc3339 } from './k8s.ts';
import { isSidecar, type ContainerKind } from './policy.ts';
import { getPodQOS } from './quantity.ts';
import { resizeActuationError, RESIZE_ERROR_REASON } from './resize-refusal.ts';
import type { PodRuntime } from './runtime.ts';
import type { KubeletTimings } from './timings.ts';

/** Condition types this kubelet owns; it never writes any other type. */
export const KUBELET_CONDITIONS = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodResizePending', 'PodResizeInProgress'] as const;
/** Owned conditions that are present only while they apply (removed otherwise). */
export const TRANSIENT_CONDITIONS = ['PodResizePending', 'PodResizeInProgress'] as const;

export interface StatusInput {
  pod: Pod;
  runtime: PodRuntime;
  now: number;
  hostIP: string;
  timings: KubeletTimings;
  /** Conditions as last written by this kubelet, preferred over the pod's for lastTransitionTime. */
  previous?: PodCondition[] | undefined;
}

/** The status fields the kubelet owns. `conditions` holds only kubelet-owned types. */
export type KubeletPodStatus = Required<Pick<PodStatus, 'phase' | 'conditions' | 'containerStatuses' | 'hostIP' | 'hostIPs' | 'startTime' | 'qosClass'>> &
  Pick<PodStatus, 'podIP' | 'podIPs' | 'initContainerStatuses' | 'observedGeneration'>;

type Cond = Pick<PodCondition, 'type' | 'status' | 'reason' | 'message'>;

function goList(names: string[]): string {
  return `[${names.join(' ')}]`;
}

interface PhaseCounts {
  pendingInit: number;
  failedInit: number;
  running: number;
  waiting: number;
  stopped: number;
  succeeded: number;
}

function countInit(pod: Pod, init: ContainerStatus[], n: PhaseCounts): void {
  init.forEach((s, i) => {
    const sidecar = isSidecar(pod.spec.initContainers?.[i] ?? {});
    if (s.state.running) {
      if (sidecar) {
        n.running++;
        if (!s.started) n.pendingInit++;
      } else n.pendingInit++;
    } else if (s.state.terminated) {
      if (!sidecar && s.state.terminated.exitCode !== 0) n.failedInit++;
    } else if (s.lastState.terminated) {
      if (!sidecar && s.lastState.terminated.exitCode !== 0) n.failedInit++;
    } else {
      n.pendingInit++;
      if (sidecar) n.waiting++;
    }
  });
}

function countRegular(regular: ContainerStatus[], n: PhaseCounts): void {
  for (const s of regular) {
    if (s.state.running) n.running++;
    else if (s.state.terminated) {
      n.stopped++;
      if (s.state.terminated.exitCode === 0) n.succeeded++;
    } else if (s.lastState.terminated) n.stopped++;
    else n.waiting++;
  }
}

export function hasAnyRegularContainerStarted(regular: ContainerStatus[]): boolean {
  return regular.some((s) => s.state.running !== undefined || s.state.terminated !== undefined || s.lastState.terminated !== undefined);
}

function isTerminalPhase(phase: string | undefined): phase is 'Succeeded' | 'Failed' {
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The phase once every container has stopped (upstream: all regular containers terminated). */
function stoppedPhase(policy: string, n: PhaseCounts, terminal: boolean): string {
  if (!terminal && (policy === 'Always' || (policy === 'OnFailure' && n.stopped !== n.succeeded))) return 'Running';
  return n.stopped === n.succeeded ? 'Succeeded' : 'Failed';
}

/** Upstream getPhase; `terminal` is a pod whose containers were stopped for deletion (podIsTerminal). */
export function getPhase(pod: Pod, init: ContainerStatus[], regular: ContainerStatus[], terminal: boolean): string {
  // Pods never leave a terminal phase.
  if (isTerminalPhase(pod.status?.phase)) return pod.status.phase;
  const n: PhaseCounts = { pendingInit: 0, failedInit: 0, running: 0, waiting: 0, stopped: 0, succeeded: 0 };
  countInit(pod, init, n);
  countRegular(regular, n);
  const policy = pod.spec.restartPolicy ?? 'Always';
  if (n.failedInit > 0 && policy === 'Never') return 'Failed';
  if ((n.pendingInit > 0 && !hasAnyRegularContainerStarted(regular)) || n.waiting > 0) return 'Pending';
  if (n.running > 0) return 'Running';
  return n.stopped === 0 ? 'Pending' : stoppedPhase(policy, n, terminal);
}

function initializedCondition(pod: Pod, init: ContainerStatus[], regular: ContainerStatus[], phase: string): Cond {
  if (init.length === 0) return { type: 'Initialized', status: 'True' };
  if (phase === 'Succeeded') return { type: 'Initialized', status: 'True', reason: 'PodCompleted' };
  if (hasAnyRegularContainerStarted(regular)) return { type: 'Initialized', status: 'True' };
  const incomplete = init.filter((s, i) => (isSidecar(pod.spec.initContainers?.[i] ?? {}) ? !s.started : !s.ready)).map((s) => s.name);
  if (incomplete.length === 0) return { type: 'Initialized', status: 'True' };
  return { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: `containers with incomplete status: ${goList(incomplete)}` };
}

function containersReadyCondition(pod: Pod, init: ContainerStatus[], regular: ContainerStatus[], phase: string): Cond {
  if (phase === 'Succeeded') return { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' };
  if (phase === 'Failed') return { type: 'ContainersReady', status: 'False', reason: 'PodFailed' };
  const sidecars = init.filter((_, i) => isSidecar(pod.spec.initContainers?.[i] ?? {}));
  const unready = [...sidecars, ...pod.spec.containers.map((c) => regular.find((s) => s.name === c.name))]
    .filter((s): s is ContainerStatus => s !== undefined && !s.ready)
    .map((s) => s.name);
  if (unready.length > 0)
    return { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: `containers with unready status: ${goList(unready)}` };
  return { type: 'ContainersReady', status: 'True' };
}

/** Upstream GeneratePodReadyCondition: ContainersReady AND every readiness gate's condition is True. */
export function podReadyCondition(pod: Pod, containersReady: Cond): Cond {
  if (containersReady.status !== 'True') return { ...containersReady, type: 'Ready' };
  const messages: string[] = [];
  for (const gate of pod.spec.readinessGates ?? []) {
    const c = pod.status?.conditions?.find((x) => x.type === gate.conditionType);
    if (!c) messages.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    else if (c.status !== 'True') messages.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`);
  }
  if (messages.length > 0) return { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: messages.join(', ') };
  return { type: 'Ready', status: 'True' };
}

function resizeConditions(rt: PodRuntime): Cond[] {
  const out: Cond[] = [];
  if (rt.resizePending) out.push({ type: 'PodResizePending', status: 'True', reason: rt.resizePending.reason, message: rt.resizePending.message });
  const actuating = Object.values(rt.containers).filter((c) => c.phase.kind === 'running' && JSON.stringify(c.allocated) !== JSON.stringify(c.actual));
  const error = actuating.map(resizeActuationError).find((m) => m !== undefined);
  if (error !== undefined) out.push({ type: 'PodResizeInProgress', status: 'True', reason: RESIZE_ERROR_REASON, message: error });
  else if (actuating.length > 0) out.push({ type: 'PodResizeInProgress', status: 'True' });
  return out;
}

const isTransient = (type: string): boolean => (TRANSIENT_CONDITIONS as readonly string[]).includes(type);

/**
 * The times of condition `c`: kept from `prev` while it says the same, else now. Upstream's resize conditions are
 * stamped anew, probe time too, whenever their reason or message changes; the others carry no probe time.
 */
function timesOf(c: Cond, prev: PodCondition | undefined, now: number): Pick<PodCondition, 'lastProbeTime' | 'lastTransitionTime'> {
  const transient = isTransient(c.type);
  const same = prev !== undefined && prev.status === c.status && (!transient || (prev.reason === c.reason && prev.message === c.message));
  const lastTransitionTime = same && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(now);
  if (!transient) return { lastProbeTime: null, lastTransitionTime };
  return { lastProbeTime: (same ? prev.lastProbeTime : undefined) ?? lastTransitionTime, lastTransitionTime };
}

function stamp(conds: Cond[], input: StatusInput): PodCondition[] {
  const generation = input.pod.metadata.generation;
  return conds.map((c) => {
    const prev = input.previous?.find((p) => p.type === c.type) ?? input.pod.status?.conditions?.find((p) => p.type === c.type);
    return {
      type: c.type,
      status: c.status,
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.message ? { message: c.message } : {}),
      ...timesOf(c, prev, input.now),
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
  });
}

function containerKinds(pod: Pod): { init: [Container, ContainerKind][]; regular: Container[] } {
  return {
    init: (pod.spec.initContainers ?? []).map((c) => [c, isSidecar(c) ? 'sidecar' : 'init']),
    regular: [...pod.spec.containers].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
}

export function buildPodStatus(input: StatusInput): KubeletPodStatus {
  const { pod, runtime: rt, now } = input;
  const kinds = containerKinds(pod);
  const ctx: ContainerStatusContext = {
    pod,
    now,
    timings: input.timings,
    defaultWaitingReason: kinds.init.length > 0 ? 'PodInitializing' : 'ContainerCreating',
    terminating: rt.terminated === true,
  };
  const init = kinds.init.map(([c, kind]) => buildContainerStatus(c, rt.containers[c.name], kind, ctx));
  const regular = kinds.regular.map((c) => buildContainerStatus(c, rt.containers[c.name], 'regular', ctx));
  const phase = getPhase(pod, init, regular, rt.terminated === true);
  const containersReady = containersReadyCondition(pod, init, regular, phase);
  const conds: Cond[] = [
    { type: 'PodReadyToStartContainers', status: rt.sandbox && !rt.terminated ? 'True' : 'False' },
    initializedCondition(pod, init, regular, phase),
    podReadyCondition(pod, containersReady),
    containersReady,
    ...resizeConditions(rt),
  ];
  // The scheduler sets PodScheduled; the kubelet adds it only for pods bound without the scheduler.
  if (!pod.status?.conditions?.some((c) => c.type === 'PodScheduled')) conds.push({ type: 'PodScheduled', status: 'True' });
  const status: KubeletPodStatus = {
    phase,
    conditions: stamp(conds, input),
    hostIP: input.hostIP,
    hostIPs: [{ ip: input.hostIP }],
    startTime: pod.status?.startTime ?? rfc3339(rt.startTime),
    qosClass: pod.status?.qosClass ?? getPodQOS(pod),
    containerStatuses: regular,
  };
  if (init.length > 0) status.initContainerStatuses = init;
  if (rt.sandbox) {
    status.podIP = rt.sandbox.ip;
    status.podIPs = [{ ip: rt.sandbox.ip }];
  }
  if (pod.metadata.generation !== undefined) status.observedGeneration = pod.metadata.generation;
  return status;
}
