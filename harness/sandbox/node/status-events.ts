/**
 * Events that follow from status transitions rather than from steps: a container entering image-pull or
 * crash-loop back-off is reported once per entry, with the kubelet's wording.
 */
import type { ContainerStatus, Pod } from '../../../src/kube/types.ts';
import type { PodEvent } from './pod-api.ts';
import type { KubeletPodStatus } from './pod-status.ts';

function statuses(s: Pick<KubeletPodStatus, 'containerStatuses' | 'initContainerStatuses'> | undefined): [ContainerStatus, boolean][] {
  if (!s) return [];
  return [
    ...(s.initContainerStatuses ?? []).map((c): [ContainerStatus, boolean] => [c, true]),
    ...s.containerStatuses.map((c): [ContainerStatus, boolean] => [c, false]),
  ];
}

export function backOffEvents(pod: Pod, prev: KubeletPodStatus | undefined, next: KubeletPodStatus): PodEvent[] {
  const before = new Map(statuses(prev).map(([c]) => [c.name, c.state.waiting?.reason]));
  const out: PodEvent[] = [];
  for (const [c, init] of statuses(next)) {
    const reason = c.state.waiting?.reason;
    if (reason === before.get(c.name)) continue;
    const fieldPath = init ? `spec.initContainers{${c.name}}` : `spec.containers{${c.name}}`;
    if (reason === 'ImagePullBackOff') {
      const image = /Back-off pulling image "([^"]*)"/.exec(c.state.waiting?.message ?? '')?.[1] ?? c.image;
      out.push({ type: 'Normal', reason: 'BackOff', message: `Back-off pulling image "${image}"`, fieldPath });
    } else if (reason === 'CrashLoopBackOff') {
      const { name, namespace, uid } = pod.metadata;
      out.push({
        type: 'Warning',
        reason: 'BackOff',
        message: `Back-off restarting failed container ${c.name} in pod ${name}_${namespace ?? ''}(${uid})`,
        fieldPath,
      });
    }
  }
  return out;
}
