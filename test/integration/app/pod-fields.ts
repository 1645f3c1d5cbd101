/**
 * The pod fields ebb reads (the typed fields of src/kube/types/pod.ts and meta.ts, without managedFields,
 * which ebb never reads on a pod), written out independently of the protobuf schema, and `project`, which
 * keeps only them of an object read in JSON.
 */
export type Shape = true | { readonly [field: string]: Shape };

const time = true;
const resources = { requests: true, limits: true } as const;
const probe = { initialDelaySeconds: true, periodSeconds: true } as const;
const mount = { name: true, mountPath: true, readOnly: true, recursiveReadOnly: true } as const;
const container = {
  name: true,
  image: true,
  imagePullPolicy: true,
  resources,
  resizePolicy: { resourceName: true, restartPolicy: true },
  readinessProbe: probe,
  startupProbe: probe,
  restartPolicy: true,
  volumeMounts: mount,
} as const;
const state = {
  waiting: { reason: true, message: true },
  running: { startedAt: time },
  terminated: { exitCode: true, reason: true, message: true, startedAt: time, finishedAt: time, containerID: true },
} as const;
const containerStatus = {
  name: true,
  image: true,
  imageID: true,
  containerID: true,
  ready: true,
  started: true,
  restartCount: true,
  state,
  lastState: state,
  allocatedResources: true,
  resources,
  volumeMounts: mount,
} as const;

export const POD_FIELDS_EBB_READS: { readonly [field: string]: Shape } = {
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
    finalizers: true,
    ownerReferences: { apiVersion: true, kind: true, name: true, uid: true, controller: true, blockOwnerDeletion: true },
  },
  spec: {
    nodeName: true,
    hostname: true,
    subdomain: true,
    containers: container,
    initContainers: container,
    restartPolicy: true,
    readinessGates: { conditionType: true },
    terminationGracePeriodSeconds: true,
    volumes: { name: true, persistentVolumeClaim: { claimName: true, readOnly: true } },
  },
  status: {
    phase: true,
    conditions: { type: true, status: true, reason: true, message: true, lastProbeTime: time, lastTransitionTime: time, observedGeneration: true },
    hostIP: true,
    hostIPs: { ip: true },
    podIP: true,
    podIPs: { ip: true },
    startTime: time,
    qosClass: true,
    observedGeneration: true,
    containerStatuses: containerStatus,
    initContainerStatuses: containerStatus,
  },
};

/** `value` with only the fields `shape` names (arrays: each item); fields absent stay absent. */
export function project(value: unknown, shape: Shape): unknown {
  if (shape === true || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => project(v, shape));
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(shape)) if (k in value) out[k] = project((value as Record<string, unknown>)[k], s);
  return out;
}
