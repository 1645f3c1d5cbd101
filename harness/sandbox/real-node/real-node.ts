/**
 * One real node: its host changes (bridge, mount namespace, cgroup root) applied through the sandbox's
 * ledger, then containerd and the kubelet started inside the node's mount namespace, each supervised (started
 * again when it exits unasked, as systemd would), until the Node is Ready and schedulable.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../../src/common/log.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import type { Pki } from '../pki.ts';
import type { Child } from '../process.ts';
import { removeAllPods } from './cri-pods.ts';
import { CONTAINERD_BIN, cniConfig, containerdPaths, startRealContainerd } from './containerd.ts';
import { applyHostChanges, type LedgerWriter } from './host-apply.ts';
import type { HostOps } from './host-ops.ts';
import { namespaceFile, planNodeChanges, type CgroupMounts } from './host-plan.ts';
import type { ImageRefs } from './images.ts';
import { REAL_NODE_LABEL, kubeletPaths, startKubelet } from './kubelet.ts';
import { waitNodeReady } from './node-ready.ts';
import { supervise, type Supervised } from './supervise.ts';

/** What every real node of a sandbox starts from: the sandbox's directory, its control plane and binaries. */
export interface RealNodeContext {
  dir: string;
  rest: KubeRest;
  pki: Pki;
  server: string;
  binDir: string;
  log: Logger;
  signal: AbortSignal;
}

export interface RealNodeStart extends RealNodeContext {
  ops: HostOps;
  i: number;
  images: ImageRefs;
  logDir: string;
  ledger: LedgerWriter;
  cgroups: CgroupMounts;
  /** Receives the node's stop as soon as it has something to stop (also when the start then fails). */
  onStop: (stop: () => Promise<void>) => void;
}

export interface RealNode {
  name: string;
  /** containerd's CRI socket (what the node's ebb daemon talks to). */
  criSocket: string;
  /** The bridge address: the node's InternalIP. */
  nodeIP: string;
  podSubnet: string;
  /** The ns file of the node's mount namespace (its containerd and kubelet run in it). */
  mountNamespace: string;
  /** Hold the PIDs of the running kubelet and containerd (each restarted when it exits unasked). */
  kubeletPidFile: string;
  containerdPidFile: string;
}

export const realNodeName = (i: number): string => `real-node-${i}`;

/** Every real node's pods: routed between the nodes' bridges by the host. */
export const REAL_POD_NETWORK = '10.213.0.0/16';

/** Network facts of real node `i`: its own /24 in REAL_POD_NETWORK, the bridge holding `.1`. */
export function nodeNetwork(i: number): { bridge: string; subnet: string; address: string; nodeIP: string; network: string } {
  return { bridge: `ebbrn${i}`, subnet: `10.213.${i}.0/24`, address: `10.213.${i}.1/24`, nodeIP: `10.213.${i}.1`, network: `ebb-real-node-${i}` };
}

export async function startRealNode(opts: RealNodeStart): Promise<RealNode> {
  const { ops, ledger, i } = opts;
  const name = realNodeName(i);
  const nodeDir = join(opts.dir, name);
  const net = nodeNetwork(i);
  const cd = containerdPaths(nodeDir);
  const kp = kubeletPaths(nodeDir);
  const cgroupRoot = `/ebb-${name}`;
  const ns = namespaceFile(nodeDir);
  await mkdir(nodeDir, { recursive: true });
  const changes = planNodeChanges({
    nodeDir,
    containerdSocket: cd.socket,
    bridge: { name: net.bridge, address: net.address },
    cgroupRoot,
    cgroups: opts.cgroups,
  });
  await applyHostChanges(ops, changes, ledger);
  const running: { containerd?: Supervised; kubelet?: Supervised } = {};
  opts.onStop(async () => {
    await running.kubelet?.stop();
    const containerd = running.containerd;
    if (!containerd) return;
    // Pods stopped through CRI first, so their network namespaces and addresses are released.
    const removed = await removeAllPods(cd.socket).catch((err: unknown) => [`(failed: ${String(err)})`]);
    opts.log.info({ node: name, removed }, 'pods removed through CRI');
    await containerd.stop();
  });
  const t0 = Date.now();
  const pause = opts.images.get('ebb/pause:1.0') ?? '';
  // Pods reach the other real nodes' pods through the host (the bridge address), and nothing else.
  const cni = cniConfig(net.network, net.bridge, net.subnet, join(nodeDir, 'ipam'), [{ dst: REAL_POD_NETWORK, gw: net.nodeIP }]);
  // Tests kill containerd and the kubelet by the PIDs in containerd.pid and kubelet.pid; the ledger always
  // records the running instance.
  running.containerd = await supervise({
    name: `containerd ${name}`,
    start: async () =>
      (await startRealContainerd({ paths: cd, sandboxImage: pause, cni, logDir: opts.logDir, name, mountNamespace: ns, signal: opts.signal })).child,
    onStart: (child) => ledger.recordProcess(`containerd ${name}`, child.pid, CONTAINERD_BIN),
    pidFile: join(nodeDir, 'containerd.pid'),
    log: opts.log,
  });
  const binary = join(opts.binDir, 'kubelet');
  const startOne = async (): Promise<Child> =>
    (
      await startKubelet({
        name,
        nodeIP: net.nodeIP,
        labels: { [REAL_NODE_LABEL.key]: REAL_NODE_LABEL.value },
        binary,
        pki: opts.pki,
        server: opts.server,
        paths: kp,
        containerdSocket: cd.socket,
        cgroupRoot,
        logDir: opts.logDir,
        mountNamespace: ns,
      })
    ).child;
  const kubelet = await supervise({
    name: `kubelet ${name}`,
    start: startOne,
    onStart: (child) => ledger.recordProcess(`kubelet ${name}`, child.pid, binary),
    pidFile: join(nodeDir, 'kubelet.pid'),
    log: opts.log,
  });
  running.kubelet = kubelet;
  let exited: string | undefined;
  const first = kubelet.current();
  void first.exited.then((how) => (exited = `kubelet exited (${how}); see ${first.logFile}`));
  await waitNodeReady(opts.rest, name, { timeoutMs: 60_000, signal: opts.signal, failed: () => exited });
  opts.log.info({ node: name, ms: Date.now() - t0 }, 'real node ready');
  return {
    name,
    criSocket: cd.socket,
    nodeIP: net.nodeIP,
    podSubnet: net.subnet,
    mountNamespace: ns,
    kubeletPidFile: join(nodeDir, 'kubelet.pid'),
    containerdPidFile: join(nodeDir, 'containerd.pid'),
  };
}
