/**
 * What real nodes change on the host, as data: a pure plan of every change (made by the sandbox or by the
 * kubelets, containerds and CNI plugins it starts), applied and recorded by host-apply.ts and undone, in
 * reverse order, by host-revert.ts — on stop, or by the next start when an earlier run was killed.
 *
 * Each real node's containerd and kubelet run in one mount namespace of that node's own, where the fixed
 * paths they use whatever their configuration says (/var/lib/kubelet, /var/log/containers, /run/containerd,
 * /run/netns, /var/lib/cni…) are bind mounts of directories in the node's own directory. What they mount
 * there (pod volumes, container root filesystems, network namespace files) lives and dies with that
 * namespace, so none of it is host state. What stays host-wide is planned here: sysctls, the empty mount
 * points, and per node its bridge, its namespace (kept alive by a bind mount of its ns file), its cgroup root
 * and the shims and processes that outlive a stop.
 */

/** A change to the host, as planned. The apply step turns each into a RecordedChange. */
export type HostChange =
  /** A sysctl: its value is saved, then set to `value` when given (else the kubelet sets it), then restored. */
  | { kind: 'sysctl'; key: string; value?: string }
  /** A directory outside the sandbox dir (a mount point for the namespaces' bind mounts): removed when it did not exist. */
  | { kind: 'hostDir'; path: string }
  /** A Linux bridge with an address (the pod network): created, then deleted. */
  | { kind: 'bridge'; name: string; address: string }
  /**
   * A persistent mount namespace, its ns file bind-mounted at `file`, with private propagation and `binds`
   * (node directory → fixed path) mounted inside: made, then its ns file unmounted (the namespace and every
   * mount in it go with the last process in it).
   */
  | { kind: 'mountNamespace'; file: string; binds: NamespaceBind[] }
  /**
   * A cgroup directory in each v1 hierarchy (the kubelet's cgroupRoot): created; its processes killed and the
   * tree removed. The kubelet also makes it in the cgroup2 mount (`unified`), which is only removed.
   */
  | { kind: 'cgroupRoot'; name: string; hierarchies: string[]; unified: string[] }
  /** containerd shims serving `address` (they outlive containerd): killed by PID. */
  | { kind: 'shims'; address: string };

/** A bind mount made inside a node's mount namespace. */
export interface NamespaceBind {
  source: string;
  target: string;
}

/** A change as applied: what reverting it needs to know. */
export type RecordedChange =
  | { kind: 'sysctl'; key: string; previous: string }
  | { kind: 'hostDir'; path: string; created: boolean }
  | { kind: 'bridge'; name: string }
  | { kind: 'mountNamespace'; file: string }
  | { kind: 'cgroupRoot'; paths: string[] }
  | { kind: 'shims'; address: string }
  /** A process the sandbox started (containerd, kubelet): stopped by PID when its command line still matches. */
  | { kind: 'process'; name: string; pid: number; exe: string };

/** What the plan needs to know of one real node. */
export interface NodePlanInput {
  /** The node's own directory inside the sandbox dir (kubelet root, containerd root and state, logs). */
  nodeDir: string;
  /** containerd's socket (its shims are started with `-address <socket>`). */
  containerdSocket: string;
  bridge: { name: string; address: string };
  cgroupRoot: string;
  /** Mount points of the cgroup v1 hierarchies (e.g. /sys/fs/cgroup/memory) and of cgroup2, if any. */
  cgroups: CgroupMounts;
}

export interface CgroupMounts {
  v1: string[];
  v2: string[];
}

/** Sysctls the kubelet sets at start (its kernel tunables). */
export const KUBELET_SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
];

/** Forwarding between the nodes' bridges: pods of different real nodes reach each other through the host. */
export const FORWARDING_SYSCTL = 'net.ipv4.ip_forward';

/**
 * Fixed host paths the kubelet, containerd and the CNI plugins use whatever their configuration says; in each
 * node's namespace, a directory of that node's own is mounted over each.
 */
export const FIXED_PATHS = {
  kubeletDir: '/var/lib/kubelet',
  containerLogs: '/var/log/containers',
  podLogs: '/var/log/pods',
  netns: '/run/netns',
  containerdRun: '/run/containerd',
  cniCache: '/var/lib/cni',
};

/** Where node `nodeDir` keeps its own copy of each fixed path (mounted over it in the node's namespace). */
export function namespaceBinds(nodeDir: string): NamespaceBind[] {
  return Object.entries(FIXED_PATHS).map(([name, target]) => ({ source: `${nodeDir}/host/${name}`, target }));
}

/** The ns file that keeps node `nodeDir`'s mount namespace alive. */
export const namespaceFile = (nodeDir: string): string => `${nodeDir}/mntns`;

/**
 * The changes made once for all real nodes, before any node's: the sysctls (saved; forwarding turned on when
 * there are several nodes) and the mount points of the namespaces' bind mounts.
 */
export function planMachineChanges(nodes: number): HostChange[] {
  return [
    ...KUBELET_SYSCTLS.map((key): HostChange => ({ kind: 'sysctl', key })),
    ...(nodes > 1 ? [{ kind: 'sysctl', key: FORWARDING_SYSCTL, value: '1' } as const] : []),
    ...Object.values(FIXED_PATHS).map((path): HostChange => ({ kind: 'hostDir', path })),
  ];
}

/**
 * The changes one real node makes, in the order they are applied; they are reverted in the reverse order (the
 * node's processes, recorded when they start, first), so shims and container processes stop before the
 * cgroups go, the namespace goes before its bridge, and the machine's changes (planned first) go last.
 */
export function planNodeChanges(input: NodePlanInput): HostChange[] {
  return [
    { kind: 'bridge', name: input.bridge.name, address: input.bridge.address },
    { kind: 'mountNamespace', file: namespaceFile(input.nodeDir), binds: namespaceBinds(input.nodeDir) },
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
