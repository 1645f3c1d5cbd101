/**
 * The pod half of a simulated kubelet: watch the pods bound to this node (fieldSelector spec.nodeName, as a
 * real kubelet does), keep one worker per pod UID, and account the node's allocated resources for resize
 * admission.
 */
import type { Logger } from '../../../src/common/log.ts';
import { core } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { listWatch } from '../../../src/kube/watch.ts';
import { adoptRuntime } from './adopt.ts';
import type { Pod, Stored } from '../../../src/kube/types.ts';
import type { NodeContext } from './node-context.ts';
import type { NodeCapacityView } from './plan.ts';
import { PodWorker } from './pod-worker.ts';

export interface PodSyncerOptions {
  rest: KubeRest;
  node: string;
  /** Node context without `capacity`, which the syncer provides from its workers. */
  context: Omit<NodeContext, 'capacity'>;
  allocatable: Record<string, string>;
  log: Logger;
  signal: AbortSignal;
}

export interface PodSyncer {
  readonly running: Promise<void>;
  /** Pods this node is running (not yet finished). */
  podCount(): number;
  /** Waits for every worker to stop (after the signal aborted). */
  drain(): Promise<void>;
}

function isTerminalInApi(pod: Stored<Pod>): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

export function startPodSyncer(opts: PodSyncerOptions): PodSyncer {
  const workers = new Map<string, PodWorker>();
  /** UIDs this node already terminated and deleted; a late event must not start them again. */
  const finished = new Set<string>();

  const capacity = (uid: string): NodeCapacityView => {
    const otherPodsRequests = [...workers.values()]
      .filter((w) => w.uid !== uid && !w.finished)
      .flatMap((w) => Object.values(w.runtime.containers).map((c) => c.allocated.requests ?? {}));
    return { allocatable: opts.allocatable, otherPodsRequests };
  };
  const ctx: NodeContext = { ...opts.context, capacity };

  const upsert = (pod: Stored<Pod>): void => {
    const uid = pod.metadata.uid;
    if (finished.has(uid)) return;
    const existing = workers.get(uid);
    if (existing) {
      existing.update(pod);
      return;
    }
    // A terminal pod that is not being deleted needs nothing from a freshly started kubelet.
    if (isTerminalInApi(pod) && !pod.metadata.deletionTimestamp) return;
    const worker = new PodWorker(pod, ctx, opts.signal, adoptRuntime(pod, ctx));
    workers.set(uid, worker);
    void worker.done.then(() => {
      if (worker.finished) finished.add(uid);
      if (workers.get(uid) === worker) workers.delete(uid);
    });
  };

  const remove = (uid: string): void => {
    workers.get(uid)?.stop();
    workers.delete(uid);
    finished.delete(uid);
    ctx.ips.release(uid);
  };

  const running = listWatch<Stored<Pod>>(
    { rest: opts.rest, ref: core('pods'), fieldSelector: `spec.nodeName=${opts.node}`, signal: opts.signal, log: opts.log },
    {
      onList(items) {
        const seen = new Set(items.map((p) => p.metadata.uid));
        for (const uid of [...workers.keys()]) if (!seen.has(uid)) remove(uid);
        for (const uid of [...finished]) if (!seen.has(uid)) finished.delete(uid);
        for (const pod of items) upsert(pod);
      },
      onEvent(ev) {
        if (ev.type === 'DELETED') remove(ev.object.metadata.uid);
        else upsert(ev.object);
      },
    },
  ).catch(() => undefined);

  return {
    running,
    podCount: () => [...workers.values()].filter((w) => !w.finished).length,
    async drain() {
      await Promise.all([...workers.values()].map((w) => w.done));
    },
  };
}
