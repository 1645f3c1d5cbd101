/**
 * `lifecycle/` owns the lifecycle hooks: states and writes (this file), where they enter a plan (`plan.ts`), how
 * they are performed (`apply.ts`) and reported (`report.ts`).
 *
 * Lifecycle hooks (`spec.lifecycle`), the pure part: what a pod's state label says, whether a hook holds a pod,
 * and the one lifecycle write that moves a pod from one state to the next. A hook holds a pod while the pod
 * carries any of its handlers: a label with the handler's value, or a finalizer.
 *
 *   Normal ──(delete wanted, preDelete holds)──▶ PreparingDelete ──(handlers gone)──▶ deleted
 *   Normal ──(in-place update wanted)──▶ PreparingUpdate (only while inPlaceUpdate holds) ──▶ Updating ──(done)──▶
 *       PreparingNormal (preNormal armed) ──(handlers gone)──▶ Normal
 */
import type { App } from '../../../api/app.ts';
import { Annotation, LIFECYCLE_STATE_LABEL, LifecycleState, POD_CONDITION_LIFECYCLE_READY, Reason } from '../../../api/keys.ts';
import type { Lifecycle, LifecycleHook, PreNormalHook } from '../../../api/lifecycle.ts';
import type { Pod, PodCondition, Stored } from '../../../kube/types.ts';
import type { Action } from '../model/actions.ts';
import { rfc3339 } from '../../shared/conditions.ts';
import { lifecycleState } from '../pods/predicates.ts';

export type HookName = 'preDelete' | 'inPlaceUpdate' | 'preNormal';

/** A pod held by a hook: which hook, and since when (RFC 3339). */
export interface HookWait {
  pod: string;
  hook: HookName;
  since: string;
}

export type LifecycleAction = Extract<Action, { kind: 'podLifecycle' }>;

export const lifecycleOf = (app: Pick<Stored<App>, 'spec'>): Lifecycle | undefined => app.spec.lifecycle;

/** Whether `hook` holds `pod`: the pod carries one of its labels (with that value) or one of its finalizers. */
export function hookHolds(hook: LifecycleHook | PreNormalHook | undefined, pod: Pod): boolean {
  if (!hook) return false;
  const labels = pod.metadata.labels ?? {};
  if (Object.entries(hook.labelsHandler ?? {}).some(([k, v]) => labels[k] === v)) return true;
  const finalizers = pod.metadata.finalizers ?? [];
  return (hook.finalizersHandler ?? []).some((f) => finalizers.includes(f));
}

/** When the pod entered its state: the annotation ebb wrote, else its creation (a state set at creation). */
function stateSince(pod: Pod, now: Date): string {
  return pod.metadata.annotations?.[Annotation.lifecycleSince] ?? pod.metadata.creationTimestamp ?? rfc3339(now);
}

function lifecycleCondition(pod: Pod): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === POD_CONDITION_LIFECYCLE_READY);
}

function readyCondition(pod: Pod, status: 'True' | 'False', reason: string, message: string, now: Date): PodCondition {
  const previous = lifecycleCondition(pod);
  const since = previous?.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : rfc3339(now);
  return { type: POD_CONDITION_LIFECYCLE_READY, status, reason, message, lastTransitionTime: since };
}

/** The write moving `pod` to `state`; `notReady` sets the lifecycle-ready condition False with it. */
export function moveTo(pod: Stored<Pod>, state: LifecycleState, now: Date, notReady = false): LifecycleAction {
  const condition = notReady
    ? readyCondition(
        pod,
        'False',
        state === LifecycleState.preparingDelete ? Reason.preparingDelete : Reason.preparingUpdate,
        `lifecycle state ${state}: waiting for the hook's handlers to be removed`,
        now,
      )
    : undefined;
  return { kind: 'podLifecycle', name: pod.metadata.name, uid: pod.metadata.uid, pod, state, since: rfc3339(now), ...(condition ? { condition } : {}) };
}

/**
 * The write returning `pod` to service: PreparingNormal with the preNormal handlers armed when there is a
 * preNormal hook (Normal otherwise), and the lifecycle-ready condition True again if ebb had set it False.
 */
export function backToService(pod: Stored<Pod>, lifecycle: Lifecycle, now: Date): LifecycleAction {
  const preNormal = lifecycle.preNormal;
  const state = preNormal ? LifecycleState.preparingNormal : LifecycleState.normal;
  const condition = lifecycleCondition(pod)?.status === 'False' ? readyCondition(pod, 'True', Reason.backInService, 'back in service', now) : undefined;
  return {
    kind: 'podLifecycle',
    name: pod.metadata.name,
    uid: pod.metadata.uid,
    pod,
    state,
    since: rfc3339(now),
    ...(preNormal?.labelsHandler ? { labels: preNormal.labelsHandler } : {}),
    ...(preNormal?.finalizersHandler ? { finalizers: preNormal.finalizersHandler } : {}),
    ...(condition ? { condition } : {}),
  };
}

/** The state label, the since annotation and the armed preNormal handlers a new pod is created with. */
export function withCreationState<P extends Pod>(pod: P, lifecycle: Lifecycle, now: Date): P {
  const preNormal = lifecycle.preNormal;
  const state = preNormal ? LifecycleState.preparingNormal : LifecycleState.normal;
  const finalizers = [...(pod.metadata.finalizers ?? []), ...(preNormal?.finalizersHandler ?? [])];
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      labels: { ...pod.metadata.labels, ...(preNormal?.labelsHandler ?? {}), [LIFECYCLE_STATE_LABEL]: state },
      annotations: { ...pod.metadata.annotations, [Annotation.lifecycleSince]: rfc3339(now) },
      ...(finalizers.length > 0 ? { finalizers } : {}),
    },
  };
}

/** The hook a pod in `state` waits on, if that state is a waiting one. */
function hookOfState(state: string | undefined): HookName | undefined {
  if (state === LifecycleState.preparingDelete) return 'preDelete';
  if (state === LifecycleState.preparingUpdate) return 'inPlaceUpdate';
  if (state === LifecycleState.preparingNormal) return 'preNormal';
  return undefined;
}

/** Pods waiting on a hook: in a preparing state, with that hook still holding them. Not terminating. */
export function hookWaits(lifecycle: Lifecycle | undefined, pods: readonly Stored<Pod>[], now: Date): HookWait[] {
  if (!lifecycle) return [];
  const out: HookWait[] = [];
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const hook = hookOfState(lifecycleState(pod));
    if (hook && hookHolds(lifecycle[hook], pod)) out.push({ pod: pod.metadata.name, hook, since: stateSince(pod, now) });
  }
  return out;
}
