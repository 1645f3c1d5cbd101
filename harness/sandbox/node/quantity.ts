/**
 * Resource quantities and the pod QoS class for the simulated kubelet: the one implementation lives in
 * `src/common/quantity.ts`; this file adapts it to the sandbox's container and pod shapes.
 */
import { effectiveRequests as requestsOf, qosClass, type QosClass } from '../../../src/common/quantity.ts';
import type { Container, Pod, ResourceList } from '../../../src/kube/types.ts';

export { milli, parseQuantity, RESIZABLE, sameQuantities, sumMilli } from '../../../src/common/quantity.ts';

/** Effective requests of a container: explicit requests, or the limits when requests are unset (API defaulting). */
export function effectiveRequests(c: Pick<Container, 'resources'>): ResourceList {
  return requestsOf(c.resources);
}

/** The pod's QoS class, as the apiserver computes it at creation (upstream GetPodQOS, cpu and memory only). */
export function getPodQOS(pod: Pick<Pod, 'spec'>): QosClass {
  return qosClass(pod.spec);
}
