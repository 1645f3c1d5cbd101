/**
 * The slice of core/v1 Pod and Node the simulated kubelet reads and writes, with timestamps as the JSON
 * strings the apiserver sends. Everything else on the objects is carried through untouched.
 */

export type ResourceList = Record<string, string>;

export interface ResourceRequirements {
  requests?: ResourceList;
  limits?: ResourceList;
}

export interface Probe {
  initialDelaySeconds?: number;
  periodSeconds?: number;
  [k: string]: unknown;
}

export interface ContainerResizePolicy {
  resourceName: string;
  /** NotRequired (default), PreferNoRestart or RestartContainer. */
  restartPolicy: string;
}

export interface Container {
  name: string;
  image: string;
  /** Always, IfNotPresent or Never (the apiserver defaults it). */
  imagePullPolicy?: string;
  resources?: ResourceRequirements;
  resizePolicy?: ContainerResizePolicy[];
  readinessProbe?: Probe;
  startupProbe?: Probe;
  /** Only on init containers: `Always` makes it a sidecar (restartable init container). */
  restartPolicy?: string;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

export interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  [k: string]: unknown;
}

export interface PodSpec {
  nodeName?: string;
  containers: Container[];
  initContainers?: Container[];
  /** Always (default), OnFailure or Never. */
  restartPolicy?: string;
  readinessGates?: { conditionType: string }[];
  terminationGracePeriodSeconds?: number;
  volumes?: Volume[];
}

export interface PodCondition {
  type: string;
  /** True, False or Unknown. */
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}
export interface ContainerStateRunning {
  startedAt?: string;
}
export interface ContainerStateTerminated {
  exitCode: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}
export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  state: ContainerState;
  lastState: ContainerState;
  allocatedResources?: ResourceList;
  resources?: ResourceRequirements;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; recursiveReadOnly?: string }[];
}

export interface PodStatus {
  /** Pending, Running, Succeeded, Failed or Unknown. */
  phase?: string;
  conditions?: PodCondition[];
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  qosClass?: string;
  observedGeneration?: number;
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  [k: string]: unknown;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  creationTimestamp?: string;
  finalizers?: string[];
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  [k: string]: unknown;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

/** Formats a time as metav1.Time does on the wire: RFC 3339 with second precision. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Formats a time as metav1.MicroTime (leases): RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
