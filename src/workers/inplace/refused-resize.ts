/**
 * A resize the kubelet refused, and what ebb does about it. Either the kubelet retries it on every sync and
 * keeps failing for a cause that does not heal (PodResizeInProgress=True, reason Error: lowering the memory
 * limit of a container restarted in place, with containerd 1.6), or it finds the resize larger than the node
 * (PodResizePending=True, reason Infeasible). Waiting would hold the rollout forever while the pod runs with its
 * old resources; a recreated pod is scheduled again, to a node with room. The rule, by podUpdatePolicy:
 * - InPlaceIfPossible: the pod is recreated, through the normal delete path of the rolling update (dry run,
 *   lifecycle hooks, maxUnavailable), and comes back with the new resources;
 * - InPlaceOnly: the pod keeps its revision (it is not counted as updated, so the rollout does not complete);
 *   the App's InPlaceFallback condition says ResizeRefused, naming the pod and quoting the kubelet, with a
 *   Warning Event. Like a change InPlaceOnly refuses, it spends no budget: other pods still move.
 * The pod's revision label is written only once a resize is actuated, so a refusal is always seen here.
 */
import { EventReason, ConditionType, Reason } from '../../api/keys.ts';
import { resizeRefusal } from './completion.ts';
import { UpdatePolicy, type FallbackTexts, type NotInPlace } from './decide.ts';
import { findContainer } from './state.ts';
import { sameResizable } from '../../common/quantity.ts';
import type { InPlacePlan } from './types.ts';
import type { Pod } from '../../kube/types.ts';

/** The container of `plan` whose resize the kubelet refuses on `pod` (ebb's resize already patched), with its message. */
export function refusedResize(pod: Pod, plan: InPlacePlan): { container: string; message: string } | undefined {
  const message = resizeRefusal(pod);
  if (message === undefined) return undefined;
  for (const { container, resources } of plan.resources) {
    const c = findContainer(pod, container);
    if (c && !c.init && sameResizable(c.spec.resources, resources)) return { container, message };
  }
  return undefined;
}

/** Why in place did not work, in the shape of a template fallback (reason and path). */
export function refusalReason(pod: Pod, container: string, message: string): NotInPlace {
  const index = pod.spec.containers.findIndex((c) => c.name === container);
  return { reason: `the kubelet refused to resize container ${container}: ${message}`, path: `spec.containers[${Math.max(0, index)}].resources` };
}

/** Condition, Event and log line for a refused resize under `policy` (recreate or hold). */
export function resizeRefusedTexts(
  pod: { name: string; uid?: string | undefined },
  revision: string,
  why: NotInPlace,
  policy: typeof UpdatePolicy.inPlaceIfPossible | typeof UpdatePolicy.inPlaceOnly,
): FallbackTexts {
  const held = policy === UpdatePolicy.inPlaceOnly;
  const message = held
    ? `Pod ${pod.name} was not updated to revision ${revision}: podUpdatePolicy is InPlaceOnly and ${why.reason}`
    : `Pod ${pod.name} is recreated for revision ${revision}: ${why.reason}`;
  return {
    condition: { type: ConditionType.inPlaceFallback, status: 'True', reason: Reason.resizeRefused, message },
    event: { type: 'Warning', reason: EventReason.resizeRefused, action: held ? 'Refuse' : 'Recreate', message, related: { kind: 'Pod', ...pod } },
    log: {
      level: 'warn',
      msg: held ? 'in-place resize refused by the kubelet, pod held' : 'in-place resize refused by the kubelet, recreating pod',
      fields: { pod: pod.name, revision, path: why.path, reason: why.reason, policy },
    },
  };
}
