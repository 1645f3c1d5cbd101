/**
 * What the view keeps of an object: a pod in the fields `pod.proto` declares (what ebb decodes of a pod read in
 * protobuf, so what the planner, the status and the in-place steps may read), an App whole but for its
 * managedFields (ebb's own kind: its spec and status are read throughout, and it is small).
 */
import type { KubeObject } from '../kube/types.ts';

/** `true`: the value as it is (a scalar or a map); an object: those fields; a one-element array: each item so. */
type Shape = true | { readonly [field: string]: Shape } | readonly [Shape];

const quantities = { limits: true, requests: true } as const;
const probe = { initialDelaySeconds: true, periodSeconds: true } as const;
const mount = { name: true, readOnly: true, mountPath: true, recursiveReadOnly: true } as const;
const container: Shape = {
  name: true,
  image: true,
  resources: quantities,
  volumeMounts: [mount],
  readinessProbe: probe,
  imagePullPolicy: true,
  startupProbe: probe,
  resizePolicy: [{ resourceName: true, restartPolicy: true }],
  restartPolicy: true,
};
const time = true;
const state = {
  waiting: { reason: true, message: true },
  running: { startedAt: time },
  terminated: { exitCode: true, reason: true, message: true, startedAt: time, finishedAt: time, containerID: true },
} as const;
const containerStatus: Shape = {
  name: true,
  state,
  lastState: state,
  ready: true,
  restartCount: true,
  image: true,
  imageID: true,
  containerID: true,
  started: true,
  allocatedResources: true,
  resources: quantities,
  volumeMounts: [mount],
};

/** The fields of `pod.proto`'s Pod, by their JSON names (a unit test holds the two together). */
export const POD_SHAPE: Shape = {
  apiVersion: true,
  kind: true,
  metadata: {
    name: true,
    generateName: true,
    namespace: true,
    uid: true,
    resourceVersion: true,
    generation: true,
    creationTimestamp: time,
    deletionTimestamp: time,
    deletionGracePeriodSeconds: true,
    labels: true,
    annotations: true,
    ownerReferences: [{ kind: true, name: true, uid: true, apiVersion: true, controller: true, blockOwnerDeletion: true }],
    finalizers: true,
  },
  spec: {
    volumes: [{ name: true, persistentVolumeClaim: { claimName: true, readOnly: true } }],
    containers: [container],
    restartPolicy: true,
    terminationGracePeriodSeconds: true,
    nodeName: true,
    hostname: true,
    subdomain: true,
    initContainers: [container],
    readinessGates: [{ conditionType: true }],
  },
  status: {
    phase: true,
    conditions: [{ type: true, status: true, lastProbeTime: time, lastTransitionTime: time, reason: true, message: true, observedGeneration: true }],
    hostIP: true,
    podIP: true,
    startTime: time,
    containerStatuses: [containerStatus],
    qosClass: true,
    initContainerStatuses: [containerStatus],
    podIPs: [{ ip: true }],
    hostIPs: [{ ip: true }],
    observedGeneration: true,
  },
};

function pick(value: unknown, shape: Shape): unknown {
  if (shape === true || value === null || typeof value !== 'object') return value;
  if (Array.isArray(shape)) return Array.isArray(value) ? value.map((v: unknown) => pick(v, shape[0] as Shape)) : value;
  const out: Record<string, unknown> = {};
  for (const [field, inner] of Object.entries(shape as Record<string, Shape>)) {
    const v = (value as Record<string, unknown>)[field];
    if (v !== undefined) out[field] = pick(v, inner);
  }
  return out;
}

/** A pod as the view keeps it. */
export function projectPod(pod: KubeObject): KubeObject {
  return pick(pod, POD_SHAPE) as KubeObject;
}

/** An App as the view keeps it: all but its managedFields. */
export function projectApp(app: KubeObject): KubeObject {
  const { managedFields: _dropped, ...metadata } = app.metadata ?? {};
  return { ...app, metadata };
}
