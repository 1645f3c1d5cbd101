/**
 * What a real node changes on the host, as data: a pure plan of every change (made by the sandbox or by the
 * kubelet, containerd and the CNI plugins it starts), applied and recorded by host-apply.ts and undone, in
 * reverse order, by host-revert.ts — on stop, or by the next start when an earlier run was killed.
 */

/** A change to the host, as planned. The apply step turns each into a RecordedChange. */
export type HostChange =
  /** A sysctl the kubelet sets (vm.overcommit_memory, kernel.panic, …): its value is saved, then restored. */
  | { kind: 'sysctl'; key: string }
  /** A directory outside the sandbox dir that something creates (the kubelet's device-plugin dir): removed when it did not exist. */
  | { kind: 'hostDir'; path: string }
  /** Symlinks in `dir` (the kubelet's /var/log/containers) that point into `target`: removed. */
  | { kind: 'hostLinks'; dir: string; target: string }
  /** A Linux bridge with an address (the pod network): created, then deleted. */
  | { kind: 'bridge'; name: string; address: string }
  /** Entries of a fixed host directory (/run/netns, shim sockets, CNI result cache) new since the start: removed (network namespaces unmounted first). */
  | { kind: 'newEntries'; dir: string; prefix: string; unmount: boolean }
  /** Every mount at or under `path` (the kubelet's bind mount of its root dir, pod volumes, rootfs mounts): unmounted. */
  | { kind: 'mountsUnder'; path: string }
  /**
   * A cgroup directory in each v1 hierarchy (the kubelet's cgroupRoot): created; its processes killed and the
   * tree removed. The kubelet also makes it in the cgroup2 mount (`unified`), which is only removed.
   */
  | { kind: 'cgroupRoot'; name: string; hierarchies: string[]; unified: string[] }
  /** containerd shims serving `address` (they outlive containerd): killed by PID. */
  | { kind: 'shims'; address: string };

/** A change as applied: what reverting it needs to know. */
export type RecordedChange =
  | { kind: 'sysctl'; key: string; previous: string }
  | { kind: 'hostDir'; path: string; created: boolean }
  | { kind: 'hostLinks'; dir: string; target: string }
  | { kind: 'bridge'; name: string }
  | { kind: 'newEntries'; dir: string; prefix: string; unmount: boolean; before: string[] }
  | { kind: 'mountsUnder'; path: string }
  | { kind: 'cgroupRoot'; paths: string[] }
  | { kind: 'shims'; address: string }
  /** A process the sandbox started (containerd, kubelet): stopped by PID when its command line still matches. */
  | { kind: 'process'; name: string; pid: number; exe: string };

/** What the plan needs to know of one real node and of the host. */
export interface HostPlanInput {
  /** The node's own directory inside the sandbox dir (kubelet root, containerd root and state, logs). */
  nodeDir: string;
  /** Where the kubelet writes pod logs (inside nodeDir). */
  podLogsDir: string;
  /** containerd's socket (its shims are started with `-address <socket>`). */
  containerdSocket: string;
  bridge: { name: string; address: string };
  /** The CNI network's name (host-local and libcni name their files after it). */
  network: string;
  cgroupRoot: string;
  /** Mount points of the cgroup v1 hierarchies (e.g. /sys/fs/cgroup/memory) and of cgroup2, if any. */
  cgroups: CgroupMounts;
}

export interface CgroupMounts {
  v1: string[];
  v2: string[];
}

/** Sysctls the kubelet sets at start (its kernel tunables) or that pod networking may touch. */
export const KUBELET_SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
];

/** Fixed host paths the kubelet, containerd and the CNI plugins use whatever their configuration says. */
export const FIXED_PATHS = {
  kubeletDir: '/var/lib/kubelet',
  containerLogs: '/var/log/containers',
  netns: '/run/netns',
  containerdRun: '/run/containerd',
  shimSockets: '/run/containerd/s',
  cniCache: '/var/lib/cni',
};

/**
 * The changes a real node makes, in the order they are applied; they are reverted in the reverse order, so
 * processes stop first, then shims, container processes and cgroups, mounts, network namespaces, the
 * bridge, and sysctls last.
 */
export function planHostChanges(input: HostPlanInput): HostChange[] {
  return [
    ...KUBELET_SYSCTLS.map((key): HostChange => ({ kind: 'sysctl', key })),
    { kind: 'hostDir', path: FIXED_PATHS.kubeletDir },
    { kind: 'hostDir', path: FIXED_PATHS.containerLogs },
    { kind: 'hostDir', path: FIXED_PATHS.cniCache },
    { kind: 'hostDir', path: FIXED_PATHS.netns },
    { kind: 'hostDir', path: FIXED_PATHS.containerdRun },
    { kind: 'hostLinks', dir: FIXED_PATHS.containerLogs, target: input.podLogsDir },
    { kind: 'bridge', name: input.bridge.name, address: input.bridge.address },
    { kind: 'newEntries', dir: `${FIXED_PATHS.cniCache}/results`, prefix: `${input.network}-`, unmount: false },
    { kind: 'newEntries', dir: FIXED_PATHS.shimSockets, prefix: '', unmount: false },
    { kind: 'newEntries', dir: FIXED_PATHS.netns, prefix: 'cni-', unmount: true },
    { kind: 'mountsUnder', path: input.nodeDir },
    { kind: 'cgroupRoot', name: input.cgroupRoot, hierarchies: input.cgroups.v1, unified: input.cgroups.v2 },
    { kind: 'shims', address: input.containerdSocket },
  ];
}

/** The cgroup mounts among `/proc/self/mounts` lines: v1 hierarchies (type `cgroup`) and cgroup2 mounts. */
export function cgroupMounts(mounts: string): CgroupMounts {
  const fields = mounts.split('\n').map((line) => line.split(' '));
  const of = (type: string): string[] => fields.filter((f) => f[2] === type && f[1] !== undefined).map((f) => f[1] ?? '');
  return { v1: of('cgroup'), v2: of('cgroup2') };
}

/**
 * Mount points at or under `path` in `/proc/self/mountinfo` text (field 5; octal escapes decoded), deepest
 * first and each once, so unmounting them in that order never meets a busy parent.
 */
export function mountsUnder(mountinfo: string, path: string): string[] {
  const base = path.replace(/\/+$/, '');
  const points = new Set<string>();
  for (const line of mountinfo.split('\n')) {
    const field = line.split(' ')[4];
    if (!field) continue;
    const point = field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (point === base || point.startsWith(`${base}/`)) points.add(point);
  }
  return [...points].sort((a, b) => b.split('/').length - a.split('/').length || b.localeCompare(a));
}

/** Entries of a directory listing that are new since `before` and start with `prefix`. */
export function newEntries(now: readonly string[], before: readonly string[], prefix: string): string[] {
  const old = new Set(before);
  return now.filter((e) => e.startsWith(prefix) && !old.has(e)).sort();
}

/**
 * Whether `/proc/<pid>/cmdline` (NUL separated) is a containerd shim serving `address`: shims are started as
 * `containerd-shim-runc-v2 -namespace <ns> -address <socket> …`.
 */
export function isShimOf(cmdline: string, address: string): boolean {
  const args = cmdline.split('\0');
  if (!(args[0] ?? '').includes('containerd-shim')) return false;
  const i = args.indexOf('-address');
  return i >= 0 && args[i + 1] === address;
}
