/**
 * The gate's early release: gate InPlaceUpdateReady goes True as soon as the kubelet has observed the last
 * batch's image patch, before the new containers run, so that the kubelet recomputes Ready in the same sync
 * that reports them ready (a gate that turns True after that sync waits for the kubelet's next pod sync, about
 * one PLEG relist period later). The state annotation stays until the new containers run their images ready.
 *
 * Why the pod is still never Ready on a container that is going away: the status that carries
 * `status.observedGeneration` = the pod's generation was generated at the start of the kubelet's sync that acts
 * on that spec, and that sync stops the old containers before it returns. The kubelet syncs one pod at a time and
 * reads the gate only in a sync (probe results reuse the conditions of the last sync), so the released gate is
 * first read by a sync that sees the old containers stopped: Ready then follows the new containers' readiness.
 * Should the kubelet fail to stop an old container (a runtime error), the pod turns Ready on it; the step then
 * holds the gate False again and the update finishes by the ordinary path (gate True once the containers run).
 */
import { Reason } from '../../api/keys.ts';
import { batchPending, type Pending } from './completion.ts';
import { gateCondition, gateConditionFor } from './gate.ts';
import { findContainer, type InPlaceState } from './state.ts';
import type { Pod, PodCondition } from '../../kube/types.ts';

/** The kubelet reports status for the pod's current spec (requires `status.observedGeneration`). */
export function kubeletObservedSpec(pod: Pod): boolean {
  const observed = pod.status?.observedGeneration;
  const generation = pod.metadata.generation;
  return observed !== undefined && generation !== undefined && observed >= generation;
}

const podReady = (pod: Pod): boolean => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/**
 * The update may release the gate early: every batch is patched, every batch but the last is done, the last
 * restarts at least one container, and no container is resized (a resize's own restart is not ordered by the
 * image patch's sync).
 */
function releasable(pod: Pod, state: InPlaceState): boolean {
  const last = state.batches.length - 1;
  if (state.batch !== last || Object.keys(state.resources).length > 0) return false;
  const restarting = (state.batches[last] ?? []).some((c) => {
    const found = findContainer(pod, c);
    return found !== undefined && !(found.init && found.spec.restartPolicy !== 'Always');
  });
  if (!restarting) return false;
  for (let i = 0; i < last; i++) if (batchPending(pod, state, i)) return false;
  return true;
}

/**
 * The gate write an unfinished update (`pending`) needs now, if any: release it (True) once the kubelet has
 * observed the last batch; hold it False again when the pod is Ready before its containers were restarted.
 */
export function earlyGate(pod: Pod, state: InPlaceState, pending: NonNullable<Pending>, now: Date): PodCondition | undefined {
  const gate = gateCondition(pod);
  if (gate?.status === 'True') {
    if (!podReady(pod)) return undefined;
    return gateConditionFor(
      pod,
      'False',
      Reason.inPlaceGateHeld,
      `pod Ready before ${pending.container} ran its new instance: held until the update is done`,
      now,
    );
  }
  if (gate?.reason !== Reason.startInPlaceUpdate || !kubeletObservedSpec(pod) || !releasable(pod, state)) return undefined;
  return gateConditionFor(pod, 'True', Reason.inPlaceContainersRestarting, 'the kubelet restarts the containers on their new images; Ready follows them', now);
}
