/** Waiting for a real node to be Ready, and making it schedulable (the sandbox runs no node-lifecycle controller). */
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../../src/kube/rest.ts';

interface NodeObject {
  spec?: { taints?: { key: string; effect: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

export const isNodeReady = (node: NodeObject): boolean => node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * Waits until the Node is Ready, then removes the `not-ready` taint it was registered with (a node-lifecycle
 * controller would; the sandbox runs none). `failed` ends the wait early when the kubelet exits.
 */
export async function waitNodeReady(
  rest: KubeRest,
  name: string,
  opts: { timeoutMs: number; signal: AbortSignal; failed: () => string | undefined },
): Promise<void> {
  const node = await waitFor(
    async () => {
      const why = opts.failed();
      if (why) throw new Error(why);
      const n = await rest.get<NodeObject>(core('nodes', undefined, name), opts.signal);
      return isNodeReady(n) ? n : undefined;
    },
    { timeoutMs: opts.timeoutMs, intervalMs: 200, signal: opts.signal, what: `Node ${name} Ready` },
  );
  const taints = node.spec?.taints ?? [];
  const kept = taints.filter((t) => t.key !== NOT_READY_TAINT);
  if (kept.length !== taints.length) {
    await rest.patch(core('nodes', undefined, name), { spec: { taints: kept.length > 0 ? kept : null } }, PatchType.merge, {}, opts.signal);
  }
}
