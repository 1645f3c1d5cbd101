/**
 * The node half of a simulated kubelet: register the Node, post its status (Ready, heartbeats, images),
 * renew its Lease, and clear the not-ready taint — the sandbox runs no node lifecycle controller to do it.
 */
import { sleep } from '../../../src/common/wait.ts';
import type { Logger } from '../../../src/common/log.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core, type ResourceRef } from '../../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../../src/kube/rest.ts';
import type { ImageStore } from './image-store.ts';
import type { ClusterStored, Node } from '../../../src/kube/types.ts';
import { microTime } from './k8s.ts';
import { buildLease, buildNode, buildNodeStatus, LEASE_NAMESPACE, NOT_READY_TAINT, statusFingerprint, type NodeIdentity } from './node-object.ts';
import type { KubeletTimings } from './timings.ts';
import { errorMessage } from '../../../src/common/errors.ts';

type NodeObject = ClusterStored<Node>;

export interface NodeAgentOptions {
  rest: KubeRest;
  id: NodeIdentity;
  store: ImageStore;
  timings: () => KubeletTimings;
  log: Logger;
  signal: AbortSignal;
  now?: () => number;
}

const leaseRef = (name?: string): ResourceRef => ({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: LEASE_NAMESPACE, name });

export interface NodeAgent {
  /** Runs heartbeats until the signal aborts; never throws. */
  readonly running: Promise<void>;
}

/** Registers the node (Ready, untainted, Lease held) and keeps it alive until the signal aborts. */
export async function startNodeAgent(opts: NodeAgentOptions): Promise<NodeAgent> {
  const now = opts.now ?? Date.now;
  const { rest, id, signal } = opts;
  const readySince = now();
  let node = await register(opts);
  node = await postStatus(opts, buildNodeStatus(id, opts.store.list(), now(), readySince), signal);
  node = await clearNotReadyTaint(rest, id.name, node, signal);
  await renewLease(rest, { name: id.name, uid: node.metadata.uid }, now(), signal);
  let lastFingerprint = statusFingerprint(buildNodeStatus(id, opts.store.list(), now(), readySince));
  let lastReport = now();
  let lastLease = now();

  const loop = async (): Promise<void> => {
    while (!signal.aborted) {
      const t = opts.timings();
      const tick = Math.min(t.leaseRenewMs, t.nodeStatusUpdateMs);
      await sleep(tick, signal).catch(() => undefined);
      if (signal.aborted) break;
      try {
        if (now() - lastLease >= t.leaseRenewMs) {
          await renewLease(rest, { name: id.name, uid: node.metadata.uid }, now(), signal);
          lastLease = now();
        }
        const status = buildNodeStatus(id, opts.store.list(), now(), readySince);
        const fingerprint = statusFingerprint(status);
        if (fingerprint !== lastFingerprint || now() - lastReport >= t.nodeStatusReportMs) {
          node = await postStatus(opts, status, signal);
          lastFingerprint = fingerprint;
          lastReport = now();
        }
        node = await clearNotReadyTaint(rest, id.name, node, signal);
      } catch (err) {
        if (signal.aborted) break;
        opts.log.warn({ error: errorMessage(err) }, 'node heartbeat failed; retrying');
      }
    }
  };
  return { running: loop() };
}

async function register(opts: NodeAgentOptions): Promise<NodeObject> {
  try {
    return await opts.rest.create<NodeObject>(core('nodes'), buildNode(opts.id), {}, opts.signal);
  } catch (err) {
    if (!isKubeError(err, 'AlreadyExists')) throw err;
    // Re-registration after a restart of the simulated node: keep the object, refresh labels and pod CIDR.
    return opts.rest.get<NodeObject>(core('nodes', undefined, opts.id.name), opts.signal);
  }
}

function postStatus(opts: NodeAgentOptions, status: Record<string, unknown>, signal: AbortSignal): Promise<NodeObject> {
  return opts.rest.patch<NodeObject>(core('nodes', undefined, opts.id.name, 'status'), { status }, PatchType.strategic, {}, signal);
}

/**
 * Removes `node.kubernetes.io/not-ready` taints, as the node lifecycle controller would. Taints are an atomic
 * list, so this is a JSON patch guarded by a test of the list it read: a concurrent change makes it fail and
 * the next heartbeat retries with the fresh node.
 */
async function clearNotReadyTaint(rest: KubeRest, name: string, node: NodeObject, signal: AbortSignal): Promise<NodeObject> {
  const taints = node.spec?.taints ?? [];
  if (!taints.some((t) => t.key === NOT_READY_TAINT)) return node;
  const kept = taints.filter((t) => t.key !== NOT_READY_TAINT);
  const patch = [
    { op: 'test', path: '/spec/taints', value: taints },
    kept.length > 0 ? { op: 'replace', path: '/spec/taints', value: kept } : { op: 'remove', path: '/spec/taints' },
  ];
  return rest.patch<NodeObject>(core('nodes', undefined, name), patch, PatchType.json, {}, signal);
}

async function renewLease(rest: KubeRest, node: { name: string; uid: string }, now: number, signal: AbortSignal): Promise<void> {
  try {
    await rest.patch(leaseRef(node.name), { spec: { holderIdentity: node.name, renewTime: microTime(now) } }, PatchType.merge, {}, signal);
  } catch (err) {
    if (!isKubeError(err, 'NotFound')) throw err;
    await rest.create(leaseRef(), buildLease(node, now), {}, signal).catch((e: unknown) => {
      if (!isKubeError(e, 'AlreadyExists')) throw e;
    });
  }
}
