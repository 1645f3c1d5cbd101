/**
 * A simulated node of the sandbox cluster that one test file owns. The sandbox's own nodes live in the global
 * setup's process, out of a test's reach; a node started here joins the same cluster (same apiserver, same
 * scheduler) with its image store, registry and timings in the test's process, so the test can count pulls and
 * slow them down. It registers with a NoSchedule taint that only the test's pods tolerate, so no other test's
 * pod lands on it, and stop() removes its pods, stops it and deletes its Node and Lease.
 */
import { randomBytes } from 'node:crypto';
import { waitFor } from '../../../src/common/wait.ts';
import { createLogger } from '../../../src/common/log.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core, type ResourceRef } from '../../../src/kube/paths.ts';
import { startSimNodes, type SimCluster, type SimNode } from '../../../harness/sandbox/node/cluster.ts';
import { SimRegistry } from '../../../harness/sandbox/node/image-store.ts';
import { LEASE_NAMESPACE, type NodeTaint } from '../../../harness/sandbox/node/node-object.ts';
import type { KubeletTimings } from '../../../harness/sandbox/node/timings.ts';
import { sandbox } from '../support.ts';

export const DEDICATED_TAINT_KEY = 'sandbox.ebb.dev/dedicated';

export interface DedicatedNode {
  name: string;
  node: SimNode;
  sim: SimCluster;
  registry: SimRegistry;
  /** What a pod needs to run on this node: a node selector and the toleration of its taint. */
  placement: { nodeSelector: Record<string, string>; tolerations: Record<string, string>[] };
  /** Changes the node's timings (e.g. a slow pull). */
  setTimings(timings: Partial<KubeletTimings>): void;
  stop(): Promise<void>;
}

const ignoreNotFound = (err: unknown): void => {
  if (!isKubeError(err, 'NotFound')) throw err;
};

/**
 * Starts one simulated node named `<prefix>-<random>`. `index` places it in the address plan; it should differ
 * from the sandbox's nodes (0, 1, 2) and from other files' dedicated nodes.
 */
export async function startDedicatedNode(opts: {
  prefix: string;
  index: number;
  timings?: Partial<KubeletTimings>;
  /** Labels the node registers with, beside the kubelet's own. */
  labels?: Record<string, string>;
}): Promise<DedicatedNode> {
  const { rest, dir } = sandbox();
  const name = `${opts.prefix}-${randomBytes(3).toString('hex')}`;
  const taint: NodeTaint = { key: DEDICATED_TAINT_KEY, value: name, effect: 'NoSchedule' };
  const registry = new SimRegistry();
  const lifetime = new AbortController();
  const sim = await startSimNodes({
    rest,
    names: [name],
    dir,
    registry,
    timings: opts.timings,
    registerWithTaints: [taint],
    registerWithLabels: opts.labels,
    firstIndex: opts.index,
    log: createLogger('sim', 'warn'),
    signal: lifetime.signal,
  });
  const node = sim.nodes.get(name)!;
  const podsHere = async (): Promise<{ metadata: { name: string; namespace: string } }[]> =>
    (await rest.list<{ metadata: { name: string; namespace: string } }>(core('pods'), { fieldSelector: `spec.nodeName=${name}` })).items;
  let stopping: Promise<void> | undefined;
  return {
    name,
    node,
    sim,
    registry,
    placement: {
      nodeSelector: { 'kubernetes.io/hostname': name },
      tolerations: [{ key: DEDICATED_TAINT_KEY, operator: 'Equal', value: name, effect: 'NoSchedule' }],
    },
    setTimings: (timings) => sim.setTimings(name, timings),
    stop: () =>
      (stopping ??= (async () => {
        // The kubelet is still running, so graceful deletions finish and the pods go away.
        for (const p of await podsHere())
          await rest.delete(core('pods', p.metadata.namespace, p.metadata.name), { gracePeriodSeconds: 0 }).catch(ignoreNotFound);
        await waitFor(async () => ((await podsHere()).length === 0 ? true : undefined), { timeoutMs: 30_000, what: `pods gone from ${name}` });
        await sim.stop();
        lifetime.abort();
        const lease: ResourceRef = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: LEASE_NAMESPACE, name };
        await rest.delete(core('nodes', undefined, name)).catch(ignoreNotFound);
        await rest.delete(lease).catch(ignoreNotFound);
      })()),
  };
}
