/**
 * Real nodes beside the simulated ones (1..MAX_REAL_NODES): for each, containerd and a kubelet in a mount
 * namespace of the node's own, joined to the sandbox control plane, CNI bridge networking with routes to the
 * other real nodes' pods and no way off the machine, and the images they run in one loopback registry. Every
 * host change is planned (host-plan.ts), applied and recorded in one ledger (host-apply.ts) and undone on
 * stop (host-revert.ts); a start first reverts what a killed run left.
 */
import { access, constants, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { KubeError } from '../../../src/kube/errors.ts';
import type { Logger } from '../../../src/common/log.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { KUBELET_CLIENT_USER } from '../pki.ts';
import { CNI_BIN_DIR, CONTAINERD_BIN } from './containerd.ts';
import { LEDGER_PATH, LedgerWriter, applyHostChanges, processStartTime, readLedger } from './host-apply.ts';
import { realHostOps, type HostOps } from './host-ops.ts';
import { cgroupMounts, planMachineChanges } from './host-plan.ts';
import { revertHostChanges } from './host-revert.ts';
import { pushSandboxImages, type ImageRefs } from './images.ts';
import { REGISTRY_BIN, startSandboxRegistry, type SandboxRegistry } from './registry.ts';
import { startRealNode, type RealNode, type RealNodeContext } from './real-node.ts';

export { REAL_POD_NETWORK, nodeNetwork, realNodeName, type RealNode } from './real-node.ts';

export class RealNodeError extends Error {
  override readonly name = 'RealNodeError';
}

/** How many real nodes one machine runs side by side (each a containerd and a kubelet). */
export const MAX_REAL_NODES = 4;

export interface RealNodesOptions extends RealNodeContext {
  count: number;
  ops?: HostOps;
}

export interface RealNodes {
  nodes: RealNode[];
  registry: SandboxRegistry;
  images: ImageRefs;
  stop(): Promise<void>;
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
      `a real node already runs on this machine (process ${ledger.owner}, sandbox ${ledger.dir}); one sandbox with real nodes per machine: stop that sandbox first`,
    );
  }
  const { failures } = await revertHostChanges(ops, ledger.changes);
  log.info({ changes: ledger.changes.length, failures, dir: ledger.dir }, 'reverted the host changes of an earlier real node');
  if (failures.length > 0) {
    const where = `${LEDGER_PATH}, sandbox ${ledger.dir}`;
    throw new RealNodeError(`could not undo what an earlier real node left (${where}): ${failures.join('; ')}; once undone: rm -r ${dirname(LEDGER_PATH)}`);
  }
  await ops.removeTree(dirname(LEDGER_PATH));
}

/** Starts `count` real nodes (1..MAX_REAL_NODES) side by side. */
export async function startRealNodes(opts: RealNodesOptions): Promise<RealNodes> {
  if (!Number.isInteger(opts.count) || opts.count < 1 || opts.count > MAX_REAL_NODES) {
    throw new RealNodeError(`--real-nodes ${opts.count}: 1..${MAX_REAL_NODES} real nodes run on one machine`);
  }
  const missing = await missingPrerequisites(opts.binDir);
  if (missing.length > 0) throw new RealNodeError(`a real node needs ${missing.join(', ')}; \`make tools\` installs the packages and builds the kubelet`);
  const ops = opts.ops ?? realHostOps;
  await cleanStaleHostChanges(ops, opts.log);
  const logDir = join(opts.dir, 'logs');
  await mkdir(logDir, { recursive: true });
  const registry = await startSandboxRegistry({ dir: opts.dir, logDir, signal: opts.signal });
  const ledger = new LedgerWriter(ops, { owner: process.pid, ownerStart: await processStartTime(ops, process.pid), dir: opts.dir, changes: [] });
  const nodeStops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    const warn = (err: unknown): void => opts.log.warn({ err: String(err) }, 'real node stop step failed');
    await Promise.all(nodeStops.map((s) => s().catch(warn)));
    const { failures } = await revertHostChanges(ops, ledger.ledger.changes);
    if (failures.length > 0) warn(new RealNodeError(`could not undo ${failures.join('; ')} (the next start retries; see ${LEDGER_PATH})`));
    else await ops.removeTree(dirname(LEDGER_PATH)).catch(warn);
    await registry.stop().catch(warn);
  };
  try {
    const t0 = Date.now();
    const [images] = await Promise.all([pushSandboxImages(registry.host, opts.signal), allowApiserverToKubelets(opts.rest, opts.signal)]);
    opts.log.info({ ms: Date.now() - t0, registry: registry.host }, 'real node images pushed');
    await applyHostChanges(ops, planMachineChanges(opts.count), ledger);
    const cgroups = cgroupMounts(await readFile('/proc/self/mounts', 'utf8'));
    const started = await Promise.allSettled(
      Array.from({ length: opts.count }, (_, i) => startRealNode({ ...opts, ops, i, images, logDir, ledger, cgroups, onStop: (s) => nodeStops.push(s) })),
    );
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return { nodes: started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])), registry, images, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Lets the apiserver's kubelet client identity use every kubelet API (logs, exec, port-forward, metrics): the
 * kubelets authorize it through the apiserver (webhook), and the built-in `system:kubelet-api-admin` role
 * grants it.
 */
async function allowApiserverToKubelets(rest: KubeRest, signal: AbortSignal): Promise<void> {
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'ebb-sandbox:kubelet-api-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:kubelet-api-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: KUBELET_CLIENT_USER }],
  };
  const ref = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings' };
  try {
    await rest.create(ref, binding, {}, signal);
  } catch (err) {
    if (!(err instanceof KubeError && err.code === 'AlreadyExists')) throw err;
  }
}
