/**
 * Real nodes beside the simulated ones: for each, containerd and a kubelet joined to the sandbox control
 * plane, CNI bridge networking with no way off the machine, and the images they run in one loopback
 * registry. Every host change is planned (host-plan.ts), applied and recorded in a ledger (host-apply.ts)
 * and undone on stop (host-revert.ts); a start first reverts what a killed run left.
 */
import { access, constants, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../../../src/common/log.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import type { Pki } from '../pki.ts';
import { removeAllPods } from './cri-pods.ts';
import { CNI_BIN_DIR, CONTAINERD_BIN, cniConfig, containerdPaths, startRealContainerd } from './containerd.ts';
import { LEDGER_PATH, LedgerWriter, applyHostChanges, processStartTime, readLedger } from './host-apply.ts';
import { realHostOps, type HostOps } from './host-ops.ts';
import { cgroupMounts, planHostChanges } from './host-plan.ts';
import { revertHostChanges } from './host-revert.ts';
import { pushSandboxImages, type ImageRefs } from './images.ts';
import { REAL_NODE_LABEL, kubeletPaths, startKubelet } from './kubelet.ts';
import { waitNodeReady } from './node-ready.ts';
import { supervise } from './supervise.ts';
import type { Child } from '../process.ts';
import { REGISTRY_BIN, startSandboxRegistry, type SandboxRegistry } from './registry.ts';

export class RealNodeError extends Error {
  override readonly name = 'RealNodeError';
}

export interface RealNodesOptions {
  dir: string;
  count: number;
  rest: KubeRest;
  pki: Pki;
  server: string;
  binDir: string;
  log: Logger;
  signal: AbortSignal;
  ops?: HostOps;
}

export interface RealNode {
  name: string;
  /** containerd's CRI socket (what the node's ebb daemon talks to). */
  criSocket: string;
  /** The bridge address: the node's InternalIP. */
  nodeIP: string;
  podSubnet: string;
  /** Hold the PIDs of the running kubelet and containerd (each restarted when it exits unasked). */
  kubeletPidFile: string;
  containerdPidFile: string;
}

export interface RealNodes {
  nodes: RealNode[];
  registry: SandboxRegistry;
  images: ImageRefs;
  stop(): Promise<void>;
}

export const realNodeName = (i: number): string => `real-node-${i}`;

/** Network facts of real node `i`: its own /24 in 10.213.0.0/16, the bridge holding `.1`. */
export function nodeNetwork(i: number): { bridge: string; subnet: string; address: string; nodeIP: string; network: string } {
  return { bridge: `ebbrn${i}`, subnet: `10.213.${i}.0/24`, address: `10.213.${i}.1/24`, nodeIP: `10.213.${i}.1`, network: `ebb-real-node-${i}` };
}

/** What is missing on this machine for a real node, each with its fix; empty when nothing is. */
export async function missingPrerequisites(binDir: string): Promise<string[]> {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root (mounts, namespaces, bridges and cgroups)');
  const need: [string, string][] = [
    [CONTAINERD_BIN, 'Debian package containerd'],
    ['/usr/sbin/runc', 'Debian package runc'],
    [join(CNI_BIN_DIR, 'bridge'), 'Debian package containernetworking-plugins'],
    [REGISTRY_BIN, 'Debian package docker-registry'],
    ['/usr/sbin/ip', 'Debian package iproute2'],
    [join(binDir, 'kubelet'), '`make control-plane`'],
  ];
  for (const [path, fix] of need) await access(path, constants.X_OK).catch(() => missing.push(`${path} (${fix})`));
  return missing;
}

/** Reverts the ledger an earlier run left, unless its owner still runs (then one real node already runs here). */
export async function cleanStaleHostChanges(ops: HostOps, log: Logger): Promise<void> {
  const ledger = await readLedger(ops);
  if (!ledger) return;
  const start = await processStartTime(ops, ledger.owner);
  const ownerAlive = ledger.owner !== process.pid && start !== undefined && (ledger.ownerStart === undefined || start === ledger.ownerStart);
  if (ownerAlive) {
    throw new RealNodeError(
      `a real node already runs on this machine (process ${ledger.owner}, sandbox ${ledger.dir}); one kubelet per machine: stop that sandbox first`,
    );
  }
  const { failures } = await revertHostChanges(ops, ledger.changes);
  log.info({ changes: ledger.changes.length, failures, dir: ledger.dir }, 'reverted the host changes of an earlier real node');
  if (failures.length > 0) throw new RealNodeError(`could not undo what an earlier real node left: ${failures.join('; ')}`);
  await ops.removeTree(dirname(LEDGER_PATH));
}

/** Starts `count` real nodes (0 or 1; more would share the kubelet's fixed host paths). */
export async function startRealNodes(opts: RealNodesOptions): Promise<RealNodes> {
  if (opts.count !== 1)
    throw new RealNodeError(`--real-nodes ${opts.count}: only 1 real node can run per machine (the kubelet's device-plugin and log paths are fixed)`);
  const missing = await missingPrerequisites(opts.binDir);
  if (missing.length > 0) throw new RealNodeError(`a real node needs ${missing.join(', ')}; \`make tools\` installs the packages and builds the kubelet`);
  const ops = opts.ops ?? realHostOps;
  await cleanStaleHostChanges(ops, opts.log);
  const logDir = join(opts.dir, 'logs');
  await mkdir(logDir, { recursive: true });
  const registry = await startSandboxRegistry({ dir: opts.dir, logDir, signal: opts.signal });
  const stops: (() => Promise<void>)[] = [() => registry.stop()];
  const stop = async (): Promise<void> => {
    for (const s of stops.reverse()) await s().catch((err: unknown) => opts.log.warn({ err: String(err) }, 'real node stop step failed'));
  };
  try {
    const t0 = Date.now();
    const images = await pushSandboxImages(registry.host, opts.signal);
    opts.log.info({ ms: Date.now() - t0, registry: registry.host }, 'real node images pushed');
    const node = await startNode(0, opts, images, logDir, stops);
    return { nodes: [node], registry, images, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startNode(i: number, opts: RealNodesOptions, images: ImageRefs, logDir: string, stops: (() => Promise<void>)[]): Promise<RealNode> {
  const ops = opts.ops ?? realHostOps;
  const name = realNodeName(i);
  const nodeDir = join(opts.dir, name);
  const net = nodeNetwork(i);
  const cd = containerdPaths(nodeDir);
  const kp = kubeletPaths(nodeDir);
  const cgroupRoot = `/ebb-${name}`;
  const ledger = new LedgerWriter(ops, { owner: process.pid, ownerStart: await processStartTime(ops, process.pid), dir: opts.dir, changes: [] });
  stops.push(async () => {
    const { failures } = await revertHostChanges(ops, ledger.ledger.changes);
    if (failures.length > 0) throw new RealNodeError(`${name}: could not undo ${failures.join('; ')} (the next start retries; see ${LEDGER_PATH})`);
    await ops.removeTree(dirname(LEDGER_PATH));
  });
  await mkdir(nodeDir, { recursive: true });
  const cgroups = cgroupMounts(await readFile('/proc/self/mounts', 'utf8'));
  const changes = planHostChanges({
    nodeDir,
    podLogsDir: kp.podLogsDir,
    containerdSocket: cd.socket,
    bridge: { name: net.bridge, address: net.address },
    network: net.network,
    cgroupRoot,
    cgroups,
  });
  await applyHostChanges(ops, changes, ledger);
  const t0 = Date.now();
  const pause = images.get('ebb/pause:1.0') ?? '';
  const cni = cniConfig(net.network, net.bridge, net.subnet, join(nodeDir, 'ipam'));
  // containerd and the kubelet are restarted when they exit unasked, as systemd would (tests kill them by the
  // PIDs in containerd.pid and kubelet.pid); the ledger always records the running instance.
  const containerd = await supervise({
    name: `containerd ${name}`,
    start: async () => (await startRealContainerd({ paths: cd, sandboxImage: pause, cni, logDir, name, signal: opts.signal })).child,
    onStart: (child) => ledger.recordProcess('containerd', child.pid, CONTAINERD_BIN),
    pidFile: join(nodeDir, 'containerd.pid'),
    log: opts.log,
  });
  stops.push(async () => {
    const removed = await removeAllPods(cd.socket).catch((err: unknown) => [`(failed: ${String(err)})`]);
    opts.log.info({ node: name, removed }, 'pods removed through CRI');
    await containerd.stop();
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
        logDir,
      })
    ).child;
  // Restarted when it exits unasked, as systemd would: a test kills it by the PID in kubelet.pid.
  const kubelet = await supervise({
    name: `kubelet ${name}`,
    start: startOne,
    onStart: (child) => ledger.recordProcess('kubelet', child.pid, binary),
    pidFile: join(nodeDir, 'kubelet.pid'),
    log: opts.log,
  });
  stops.push(() => kubelet.stop());
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
    kubeletPidFile: join(nodeDir, 'kubelet.pid'),
    containerdPidFile: join(nodeDir, 'containerd.pid'),
  };
}
