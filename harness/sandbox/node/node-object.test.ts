import { describe, expect, it } from 'vitest';
import { nodeInternalIP, PodIPPool, podCIDR } from './addresses.ts';
import { buildLease, buildNode, buildNodeStatus, defaultNodeShape, nodeImages, statusFingerprint } from './node-object.ts';
import type { StoredImage } from './image-store.ts';
import { T0 } from './test-fixtures.ts';

const id = { name: 'sim-node-3', internalIP: nodeInternalIP(3), podCIDR: podCIDR(3), shape: defaultNodeShape, bootID: 'boot-1' };

function image(name: string, size: number): StoredImage {
  return {
    id: `sha256:${name}`,
    repoTags: [`docker.io/library/${name}:1`],
    repoDigests: [`docker.io/library/${name}@sha256:${name}`],
    size,
    pulledAt: new Date(T0),
  };
}

describe('node addresses', () => {
  it.each<[number, string, string]>([
    [0, '127.0.1.1', '10.244.0.0/24'],
    [253, '127.0.1.254', '10.244.253.0/24'],
    [254, '127.0.2.1', '10.244.254.0/24'],
    [256, '127.0.2.3', '10.245.0.0/24'],
  ])('node %s has InternalIP %s and pod CIDR %s', (i, ip, cidr) => {
    expect(nodeInternalIP(i)).toBe(ip);
    expect(podCIDR(i)).toBe(cidr);
  });

  it('gives each pod a unique IP and reuses released ones', () => {
    const pool = new PodIPPool(1);
    expect(pool.allocate('a')).toBe('10.244.1.2');
    expect(pool.allocate('b')).toBe('10.244.1.3');
    expect(pool.allocate('a')).toBe('10.244.1.2');
    pool.release('a');
    expect(pool.allocate('c')).toBe('10.244.1.2');
    pool.reserve('d', '10.244.1.9');
    expect(pool.size).toBe(3);
  });
});

describe('node object', () => {
  it('registers a linux node with kubelet labels and its pod CIDR', () => {
    expect(buildNode(id)).toMatchObject({
      metadata: { name: 'sim-node-3', labels: { 'kubernetes.io/hostname': 'sim-node-3', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' } },
      spec: { podCIDR: '10.244.3.0/24', podCIDRs: ['10.244.3.0/24'] },
    });
    expect((buildNode(id) as { spec: object }).spec).not.toHaveProperty('taints');
  });

  it('registers with the taints it is given', () => {
    const taints = [{ key: 'sandbox.ebb.dev/dedicated', value: 'prewarm', effect: 'NoSchedule' as const }];
    expect(buildNode({ ...id, taints })).toMatchObject({ spec: { taints } });
  });

  it('posts a Ready status with capacity, addresses and node info', () => {
    const s = buildNodeStatus(id, [], T0 + 60_000, T0);
    expect(s).toMatchObject({
      capacity: { cpu: '16', memory: '64Gi', pods: '110' },
      allocatable: { cpu: '16', memory: '64Gi', pods: '110' },
      addresses: [
        { type: 'InternalIP', address: '127.0.1.4' },
        { type: 'Hostname', address: 'sim-node-3' },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.34.4',
        containerRuntimeVersion: 'containerd://1.7.24',
        operatingSystem: 'linux',
        architecture: 'amd64',
        bootID: 'boot-1',
      },
    });
    const ready = (s.conditions as { type: string; status: string; reason: string; lastHeartbeatTime: string; lastTransitionTime: string }[]).find(
      (c) => c.type === 'Ready',
    );
    expect(ready).toMatchObject({
      status: 'True',
      reason: 'KubeletReady',
      lastHeartbeatTime: '2025-01-01T00:01:00Z',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    });
  });

  it('lists the largest images first, digests before tags, and ignores heartbeats in the fingerprint', () => {
    expect(nodeImages([image('small', 10), image('big', 99)]).map((i) => i.names[0])).toEqual([
      'docker.io/library/big@sha256:big',
      'docker.io/library/small@sha256:small',
    ]);
    expect(statusFingerprint(buildNodeStatus(id, [], T0, T0))).toBe(statusFingerprint(buildNodeStatus(id, [], T0 + 10_000, T0)));
    expect(statusFingerprint(buildNodeStatus(id, [image('a', 1)], T0, T0))).not.toBe(statusFingerprint(buildNodeStatus(id, [], T0, T0)));
  });

  it('holds a lease owned by the node', () => {
    expect(buildLease({ name: 'sim-node-3', uid: 'n-uid' }, T0 + 1)).toMatchObject({
      metadata: { namespace: 'kube-node-lease', ownerReferences: [{ kind: 'Node', name: 'sim-node-3', uid: 'n-uid' }] },
      spec: { holderIdentity: 'sim-node-3', leaseDurationSeconds: 40, renewTime: '2025-01-01T00:00:00.001000Z' },
    });
  });
});
