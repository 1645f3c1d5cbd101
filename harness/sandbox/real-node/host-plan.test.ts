import { describe, expect, it } from 'vitest';
import { cgroupMounts, isShimOf, mountsUnder, newEntries, planHostChanges, type HostPlanInput } from './host-plan.ts';

const input: HostPlanInput = {
  nodeDir: '/tmp/sb/real-node-0',
  podLogsDir: '/tmp/sb/real-node-0/pod-logs',
  containerdSocket: '/tmp/sb/real-node-0/containerd.sock',
  bridge: { name: 'ebbrn0', address: '10.213.0.1/24' },
  network: 'ebb-real-node-0',
  cgroupRoot: '/ebb-real-node-0',
  cgroups: { v1: ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/memory'], v2: ['/sys/fs/cgroup/unified'] },
};

describe('planHostChanges', () => {
  const plan = planHostChanges(input);
  const index = (kind: string): number => plan.findIndex((c) => c.kind === kind);

  it('saves the sysctls the kubelet sets, before anything else', () => {
    const keys = plan.filter((c) => c.kind === 'sysctl').map((c) => (c.kind === 'sysctl' ? c.key : ''));
    expect(keys).toEqual(expect.arrayContaining(['vm.overcommit_memory', 'kernel.panic', 'kernel.panic_on_oops']));
    expect(index('sysctl')).toBe(0);
  });

  it('is reverted shims first, then cgroups, mounts, network namespaces, the bridge and the sysctls last', () => {
    const reverted = [...plan].reverse().map((c) => c.kind);
    const order = ['shims', 'cgroupRoot', 'mountsUnder', 'newEntries', 'bridge', 'hostLinks', 'hostDir', 'sysctl'] as const;
    expect(order.map((k) => reverted.indexOf(k))).toEqual([...order.map((k) => reverted.indexOf(k))].sort((a, b) => a - b));
  });

  it('covers the fixed host paths and the node dir', () => {
    expect(plan).toContainEqual({ kind: 'newEntries', dir: '/run/netns', prefix: 'cni-', unmount: true });
    expect(plan).toContainEqual({ kind: 'hostDir', path: '/var/lib/kubelet' });
    expect(plan).toContainEqual({ kind: 'hostLinks', dir: '/var/log/containers', target: input.podLogsDir });
    expect(plan).toContainEqual({ kind: 'mountsUnder', path: input.nodeDir });
    expect(plan).toContainEqual({ kind: 'cgroupRoot', name: '/ebb-real-node-0', hierarchies: input.cgroups.v1, unified: input.cgroups.v2 });
    expect(plan).toContainEqual({ kind: 'shims', address: input.containerdSocket });
  });
});

describe('host facts', () => {
  it('lists mounts under a path deepest first, decoding escapes, each once', () => {
    const info = [
      '30 1 8:1 / / rw - ext4 /dev/vda rw',
      '40 30 8:1 /tmp/sb/real-node-0/kubelet /tmp/sb/real-node-0/kubelet rw shared:5 - ext4 /dev/vda rw',
      '41 40 0:50 / /tmp/sb/real-node-0/kubelet/pods/u/volumes/x rw - tmpfs tmpfs rw',
      '42 30 0:50 / /tmp/sb/real-node-0/kubelet/pods/u/volumes/x rw - tmpfs tmpfs rw',
      '43 30 0:51 / /tmp/sb/real-node-0\\040other rw - tmpfs tmpfs rw',
      '44 30 0:52 / /tmp/sb/real-node-01 rw - tmpfs tmpfs rw',
    ].join('\n');
    expect(mountsUnder(info, '/tmp/sb/real-node-0')).toEqual(['/tmp/sb/real-node-0/kubelet/pods/u/volumes/x', '/tmp/sb/real-node-0/kubelet']);
    expect(mountsUnder(info, '/tmp/sb/real-node-0 other')).toEqual(['/tmp/sb/real-node-0 other']);
  });

  it('finds new entries with a prefix', () => {
    expect(newEntries(['cni-b', 'cni-a', 'other', 'cni-old'], ['cni-old'], 'cni-')).toEqual(['cni-a', 'cni-b']);
  });

  it('tells a shim of this containerd from others', () => {
    const shim = (address: string): string => ['/usr/bin/containerd-shim-runc-v2', '-namespace', 'k8s.io', '-id', 'abc', '-address', address, ''].join('\0');
    expect(isShimOf(shim('/tmp/sb/c.sock'), '/tmp/sb/c.sock')).toBe(true);
    expect(isShimOf(shim('/run/containerd/containerd.sock'), '/tmp/sb/c.sock')).toBe(false);
    expect(isShimOf(['/usr/bin/containerd', '-address', '/tmp/sb/c.sock'].join('\0'), '/tmp/sb/c.sock')).toBe(false);
  });

  it('reads cgroup v1 hierarchies and cgroup2 mounts', () => {
    const mounts = [
      'tmpfs /sys/fs/cgroup tmpfs rw 0 0',
      'cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0',
      'cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0',
      'cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0',
    ].join('\n');
    expect(cgroupMounts(mounts)).toEqual({ v1: ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/memory'], v2: ['/sys/fs/cgroup/unified'] });
  });
});
