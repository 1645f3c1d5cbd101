/**
 * The pod status fields ebb and users read, taken from a recorded in-place update, in a form two nodes can be
 * compared by: the phases and condition states a pod went through (in order, repeats dropped), and what changed
 * in each container between the first and the last version.
 */
import type { ContainerStatus, Pod } from '../../src/kube/types.ts';
import type { Seen } from '../integration/app/pod-history.ts';

/** The conditions whose changes are compared, in this order in each step. */
const TRACKED = ['InPlaceUpdateReady', 'ContainersReady', 'Ready'] as const;

export interface ContainerChange {
  name: string;
  restartCountDelta: number;
  imageIDChanged: boolean;
  containerIDChanged: boolean;
  /** `lastState` keys after the update (e.g. ['terminated']). */
  lastState: string[];
  /** The new instance started after the old one (state.running.startedAt grew), or stayed the same. */
  startedAt: 'later' | 'same' | 'earlier' | 'missing';
  /** The status reports resources (requests/limits) as the kubelet applied them. */
  hasResources: boolean;
  imageIDForm: string;
}

export interface Trace {
  phases: string[];
  /** `Gate/ContainersReady/Ready` as T/F/-, each state once in the order first seen. */
  steps: string[];
  /** The final conditions as `type=status`. */
  conditionTypes: string[];
  /** Condition types seen at any time during the update, beside the tracked ones (e.g. PodResizeInProgress). */
  otherConditionsSeen: string[];
  /**
   * The kubelet reported the spec's generation (status.observedGeneration) while a container it restarts
   * still ran its old instance: what ebb's early gate release waits for, on both nodes.
   */
  observedBeforeRestart: boolean;
  /**
   * Ready (T/F/-) in the first version that reports the patched spec's generation: a kubelet's sync reads the
   * readiness gates as the pod shows them then, so with ebb's gate False it is F even before the restart.
   */
  readyWhenObserved: string;
  containers: ContainerChange[];
}

const condition = (p: Pod, type: string): string => {
  const c = p.status?.conditions?.find((x) => x.type === type);
  return c ? (c.status === 'True' ? 'T' : 'F') : '-';
};

const dedupe = (values: string[]): string[] => values.filter((v, i) => v !== values[i - 1]);

function startedAt(before: ContainerStatus | undefined, after: ContainerStatus | undefined): ContainerChange['startedAt'] {
  const [a, b] = [before?.state?.running?.startedAt, after?.state?.running?.startedAt];
  if (!a || !b) return 'missing';
  const d = Date.parse(b) - Date.parse(a);
  return d > 0 ? 'later' : d === 0 ? 'same' : 'earlier';
}

/** `<repo>@sha256:<hex>` → `repo@sha256`, `sha256:<hex>` → `sha256`: the shape, not the value. */
const idForm = (id: string | undefined): string => (id ?? '').replace(/[0-9a-f]{64}$/, '').replace(/^.*@/, 'repo@');

const statusOf = (p: Pod, name: string): ContainerStatus | undefined => p.status?.containerStatuses?.find((c) => c.name === name);
const restarts = (c: ContainerStatus | undefined): number => c?.restartCount ?? 0;
const lastStateKeys = (c: ContainerStatus | undefined): string[] => Object.keys(c?.lastState ?? {}).sort();

function containerChange(before: Pod, after: Pod, name: string): ContainerChange {
  const [a, b] = [statusOf(before, name), statusOf(after, name)];
  return {
    name,
    restartCountDelta: restarts(b) - restarts(a),
    imageIDChanged: a?.imageID !== b?.imageID,
    containerIDChanged: a?.containerID !== b?.containerID,
    lastState: lastStateKeys(b),
    startedAt: startedAt(a, b),
    hasResources: b?.resources !== undefined,
    imageIDForm: idForm(b?.imageID),
  };
}

/** A version where the kubelet has observed a spec change whose restart it has not reported yet. */
function observedBeforeRestart(first: Pod, pods: Pod[]): boolean {
  const restarted = (first.spec.containers ?? []).filter((c) => pods.at(-1)?.spec.containers.find((x) => x.name === c.name)?.image !== c.image);
  return pods.some(
    (p) =>
      p.metadata.generation !== first.metadata.generation &&
      (p.status?.observedGeneration ?? 0) >= (p.metadata.generation ?? Infinity) &&
      restarted.some((c) => statusOf(p, c.name)?.containerID === statusOf(first, c.name)?.containerID),
  );
}

function readyWhenObserved(first: Pod, pods: Pod[]): string {
  const p = pods.find((x) => x.metadata.generation !== first.metadata.generation && (x.status?.observedGeneration ?? 0) >= (x.metadata.generation ?? Infinity));
  return p ? condition(p, 'Ready') : '-';
}

/** The trace of one pod from its recorded versions (the first is the settled pod before the update). */
export function traceOf(seen: readonly Seen[]): Trace {
  const pods = seen.map((s) => s.pod);
  const first = pods[0];
  const last = pods.at(-1);
  if (!first || !last) throw new Error('no pod versions recorded');
  return {
    phases: dedupe(pods.map((p) => String(p.status?.phase ?? ''))),
    steps: dedupe(pods.map((p) => TRACKED.map((t) => condition(p, t)).join('/'))),
    conditionTypes: (last.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort(),
    otherConditionsSeen: [...new Set(pods.flatMap((p) => (p.status?.conditions ?? []).map((c) => c.type)))]
      .filter((t) => !(last.status?.conditions ?? []).some((c) => c.type === t))
      .sort(),
    observedBeforeRestart: observedBeforeRestart(first, pods),
    readyWhenObserved: readyWhenObserved(first, pods),
    containers: (last.spec.containers ?? []).map((c) => containerChange(first, last, c.name)),
  };
}
