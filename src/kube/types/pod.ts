/**
 * core/v1 Pod as it travels on the wire, with timestamps as the JSON strings the apiserver sends. Only the
 * fields ebb (and the sandbox's simulated kubelet) read or write are typed; the index signatures carry
 * everything else through untouched. The worker reads pods in protobuf, decoding only the fields declared in
 * `kube/protobuf/pod.proto`: a field typed here that ebb starts to read goes there too, and into `POD_SHAPE`
 * (`view/project.ts`: what the view keeps of a pod, held equal to pod.proto by a unit test; the protobuf test
 * checks the decoder against the apiserver's JSON projected to it).
 */
import type { ObjectMeta } from './meta.ts';

/** Resource name (cpu, memory, ...) to quantity. */
export type ResourceList = Record<string, string>;

export interface ResourceRequirements {
  requests?: ResourceList;
  limits?: ResourceList;
  [field: string]: unknown;
}

export interface Probe {
  initialDelaySeconds?: number;
  periodSeconds?: number;
  [field: string]: unknown;
}

export interface ContainerResizePolicy {
  resourceName: string;
  /** NotRequired (default), PreferNoRestart or RestartContainer. */
  restartPolicy: string;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  recursiveReadOnly?: string;
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
  volumeMounts?: VolumeMount[];
  [field: string]: unknown;
}

export interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  [field: string]: unknown;
}

export interface PodReadinessGate {
  conditionType: string;
}

export interface PodSpec {
  nodeName?: string;
  hostname?: string;
  subdomain?: string;
  containers: Container[];
  initContainers?: Container[];
  /** Always (default), OnFailure or Never. */
  restartPolicy?: string;
  readinessGates?: PodReadinessGate[];
  terminationGracePeriodSeconds?: number;
  volumes?: Volume[];
  [field: string]: unknown;
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
  volumeMounts?: VolumeMount[];
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
  [field: string]: unknown;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

/** Pod phases (core/v1). */
export const PodPhase = { pending: 'Pending', running: 'Running', succeeded: 'Succeeded', failed: 'Failed' } as const;
