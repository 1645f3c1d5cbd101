/**
 * The readiness gates' conditions as the simulated kubelet's Ready sees them. A real kubelet does not recompute
 * Ready the moment another writer changes a gate's condition: the change reaches it as a status-only pod update
 * (HandlePodReconcile), and the pod sync it asks for waits for the runtime's next relist before it generates the
 * status, so Ready follows a gate about `readinessGateMs` later (measured on a real kubelet: about 2 s).
 *
 * Every pod sync reads the gates as the pod shows them then (generateAPIPodStatus copies the conditions other
 * writers own from the pod it syncs), so a sync the kubelet makes for another cause reads a pending change at
 * once: one for a spec change (an image patch: the status that first carries its `observedGeneration` computes
 * Ready from the gates as they are), and one after the containers changed (the relist that reports a container
 * restarted). The pod worker says when a status comes from such a sync (`synced`).
 *
 * Pure: the pod worker keeps the view, passes the pod and the time, and sleeps until `dueAt`.
 */
import type { Pod, PodCondition } from '../../../src/kube/types.ts';

/** Gate condition type → its status (absent: no condition of that type). */
export type GateStatuses = Record<string, string | undefined>;

export interface GateView {
  /** What Ready is computed from. */
  applied: GateStatuses;
  /** A change seen at `since` that Ready does not reflect yet. */
  pending?: { statuses: GateStatuses; since: number };
}

/** The statuses of `pod`'s readiness gates' conditions, as the apiserver shows them. */
export function gateStatuses(pod: Pod): GateStatuses {
  const out: GateStatuses = {};
  for (const g of pod.spec.readinessGates ?? []) out[g.conditionType] = pod.status?.conditions?.find((c) => c.type === g.conditionType)?.status;
  return out;
}

function same(a: GateStatuses, b: GateStatuses): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => a[k] === b[k]);
}

/** The view when the kubelet first sees the pod: the gates as they are. */
export function initialGateView(pod: Pod): GateView {
  return { applied: gateStatuses(pod) };
}

/**
 * The view at `now`: a change older than `delayMs` is applied; a newer one (or one that changed again) is pending,
 * unless the status comes from a pod sync made for another cause (`synced`), which reads the gates as they are.
 */
export function advanceGateView(view: GateView, pod: Pod, now: number, delayMs: number, synced = false): GateView {
  const current = gateStatuses(pod);
  if (synced || same(current, view.applied)) return { applied: current };
  const since = view.pending && same(view.pending.statuses, current) ? view.pending.since : now;
  if (now - since >= delayMs) return { applied: current };
  return { applied: view.applied, pending: { statuses: current, since } };
}

/** When the pending change is due (the worker wakes then), if any. */
export function gateDueAt(view: GateView, delayMs: number): number | undefined {
  return view.pending ? view.pending.since + delayMs : undefined;
}

/** `pod` with its gates' conditions replaced by the view's (the other conditions untouched), for the status builder. */
export function withGateView<P extends Pod>(pod: P, view: GateView): P {
  const types = Object.keys(view.applied);
  if (types.length === 0) return pod;
  const live = pod.status?.conditions ?? [];
  const others = live.filter((c) => !types.includes(c.type));
  const gates: PodCondition[] = types.flatMap((type) => {
    const status = view.applied[type];
    if (status === undefined) return [];
    const c = live.find((x) => x.type === type);
    return [{ ...(c ?? { type }), type, status }];
  });
  return { ...pod, status: { ...pod.status, conditions: [...others, ...gates] } };
}
