import { describe, expect, it } from 'vitest';
import { cgroupMounts, isShimOf, mountsUnder, planMachineChanges, planNodeChanges, type NodePlanInput } from './host-plan.ts';

const input: NodePlanInput = {
  nodeDir: '/tmp/sb/real-node-0',
  containerdSocket: '/tmp/sb/real-node-0/containerd.sock',
  bridge: { name: 'ebbrn0', address: '10.213.0.1/24' },
  cgroupRoot: '/ebb-real-node-0',
  cgroups: { v1: ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/memory'], v2: ['/sys/fs/cgroup/unified'] },
};

describe('planMachineChanges', () => {
  it('saves the sysctls the kubelet sets, before anything else', () => {
    const plan = planMachineChanges(1);
    const keys = plan.filter((c) => c.kind === 'sysctl').map((c) => (c.kind === 'sysctl' ? c.key : ''));
    expect(keys).toEqual(expect.arrayContaining(['vm.overcommit_memory', 'kernel.panic', 'kernel.panic_on_oops']));
    expect(plan[0]?.kind).toBe('sysctl');
  });

  it('turns forwarding on (saved, then restored) only when pods of several nodes must reach each other', () => {
    expect(planMachineChanges(1)).not.toContainEqual(expect.objectContaining({ key: 'net.ipv4.ip_forward' }));
    expect(planMachineChanges(3)).toContainEqual({ kind: 'sysctl', key: 'net.ipv4.ip_forward', value: '1' });
  });

  it('makes the mount points of every fixed path the kubelet, containerd and CNI use', () => {
    const dirs = planMachineChanges(2).flatMap((c) => (c.kind === 'hostDir' ? [c.path] : []));
    expect(dirs).toEqual(expect.arrayContaining(['/var/lib/kubelet', '/var/log/containers', '/var/log/pods', '/run/containerd', '/run/netns', '/var/lib/cni']));
  });
});

describe('planNodeChanges', () => {
  const plan = planNodeChanges(input);

  it('is reverted shims first, then cgroups, the namespace, and the bridge last', () => {
    expect([...plan].reverse().map((c) => c.kind)).toEqual(['shims', 'cgroupRoot', 'mountNamespace', 'bridge']);
  });

  it("mounts the node's own directory over each fixed path, inside a namespace kept in the node dir", () => {
    const ns = plan.find((c) => c.kind === 'mountNamespace');
    expect(ns).toMatchObject({ file: '/tmp/sb/real-node-0/mntns' });
    const binds = ns?.kind === 'mountNamespace' ? ns.binds : [];
    expect(binds).toContainEqual({ source: '/tmp/sb/real-node-0/host/kubeletDir', target: '/var/lib/kubelet' });
    expect(binds).toContainEqual({ source: '/tmp/sb/real-node-0/host/netns', target: '/run/netns' });
    expect(binds.every((b) => b.source.startsWith(`${input.nodeDir}/`))).toBe(true);
  });

  it('gives two nodes nothing host-wide in common', () => {
    const other = planNodeChanges({
      ...input,
      nodeDir: '/tmp/sb/real-node-1',
      containerdSocket: '/tmp/sb/real-node-1/containerd.sock',
      bridge: { name: 'ebbrn1', address: '10.213.1.1/24' },
      cgroupRoot: '/ebb-real-node-1',
    });
    const keys = (p: typeof plan): string[] => p.map((c) => JSON.stringify({ ...c, binds: undefined }));
    expect(keys(plan).filter((k) => keys(other).includes(k))).toEqual([]);
  });

  it('covers the cgroup root and the shims', () => {
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
