/**
 * Pure builders of what a kubelet registers and posts for its node: the Node object, its status (capacity,
 * conditions, addresses, nodeInfo, images) and its Lease in kube-node-lease.
 */
import { createHash } from 'node:crypto';
import type { StoredImage } from './image-store.ts';
import { microTime, rfc3339 } from './k8s.ts';

export const KUBELET_VERSION = 'v1.34.4';
export const CONTAINER_RUNTIME_VERSION = 'containerd://1.7.24';
export const LEASE_NAMESPACE = 'kube-node-lease';
export const LEASE_DURATION_SECONDS = 40;
export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';
/** Label that marks a simulated node. */
export const SIMULATED_LABEL = 'sandbox.ebb.dev/simulated';
/** The kubelet reports at most this many images (nodeStatusMaxImages). */
const MAX_IMAGES = 50;

export interface NodeShape {
  cpu: string;
  memory: string;
  pods: string;
  'ephemeral-storage': string;
  arch: string;
}

export const defaultNodeShape: Readonly<NodeShape> = Object.freeze({ cpu: '16', memory: '64Gi', pods: '110', 'ephemeral-storage': '100Gi', arch: 'amd64' });

export interface NodeTaint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface NodeIdentity {
  name: string;
  internalIP: string;
  podCIDR: string;
  shape: NodeShape;
  /** Changes on every (simulated) kubelet start. */
  bootID: string;
  /** Taints the node registers with (kubelet --register-with-taints). */
  taints?: readonly NodeTaint[] | undefined;
  /** Labels the node registers with beside the kubelet's own (kubelet --node-labels). */
  labels?: Readonly<Record<string, string>> | undefined;
}

function hex(seed: string, length: number): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, length);
}

function uuidFrom(seed: string): string {
  const h = hex(seed, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export function resourceList(shape: NodeShape): Record<string, string> {
  return { cpu: shape.cpu, memory: shape.memory, pods: shape.pods, 'ephemeral-storage': shape['ephemeral-storage'] };
}

/** The Node as the kubelet registers it (the apiserver's TaintNodesByCondition adds the not-ready taint). */
export function buildNode(id: NodeIdentity): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: id.name,
      labels: {
        'kubernetes.io/hostname': id.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': id.shape.arch,
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': id.shape.arch,
        [SIMULATED_LABEL]: 'true',
        ...id.labels,
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: { podCIDR: id.podCIDR, podCIDRs: [id.podCIDR], ...(id.taints?.length ? { taints: [...id.taints] } : {}) },
  };
}

export interface NodeCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

function conditions(now: number, since: number): NodeCondition[] {
  const c = (type: string, status: string, reason: string, message: string): NodeCondition => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: rfc3339(now),
    lastTransitionTime: rfc3339(since),
  });
  return [
    c('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    c('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    c('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    c('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
  ];
}

/** status.images: names are repo digests then tags, largest images first, at most 50. */
export function nodeImages(images: StoredImage[]): { names: string[]; sizeBytes: number }[] {
  return [...images]
    .sort((a, b) => b.size - a.size || a.id.localeCompare(b.id))
    .slice(0, MAX_IMAGES)
    .map((img) => ({ names: [...img.repoDigests, ...img.repoTags], sizeBytes: img.size }));
}

export function buildNodeStatus(id: NodeIdentity, images: StoredImage[], now: number, readySince: number): Record<string, unknown> {
  const resources = resourceList(id.shape);
  return {
    capacity: resources,
    allocatable: resources,
    conditions: conditions(now, readySince),
    addresses: [
      { type: 'InternalIP', address: id.internalIP },
      { type: 'Hostname', address: id.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: hex(`machine:${id.name}`, 32),
      systemUUID: uuidFrom(`system:${id.name}`),
      bootID: id.bootID,
      kernelVersion: '6.1.0-sim-amd64',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      containerRuntimeVersion: CONTAINER_RUNTIME_VERSION,
      kubeletVersion: KUBELET_VERSION,
      operatingSystem: 'linux',
      architecture: id.shape.arch,
    },
    images: nodeImages(images),
  };
}

/** The part of the node status that, when it changes, is posted before the report interval ends. */
export function statusFingerprint(status: Record<string, unknown>): string {
  const { conditions: _c, ...rest } = status;
  return JSON.stringify(rest);
}

export function buildLease(node: { name: string; uid: string }, now: number): Record<string, unknown> {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: node.name,
      namespace: LEASE_NAMESPACE,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid }],
    },
    spec: { holderIdentity: node.name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: microTime(now) },
  };
}
