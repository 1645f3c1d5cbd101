/**
 * What the KEDA tests share: the objects they read, deploy/keda rendered by the real kubectl, a stand-in worker
 * Deployment that nothing runs, and a follower that runs one real `ebb worker` while KEDA asks for replicas.
 */
import { sleep } from '../../../src/common/wait.ts';
import type { ResourceRef } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { renderOverlay } from '../deploy/components.ts';
import type { EbbProcess } from '../watcher/helpers.ts';

export const WORKER = 'ebb-worker';

export const deploymentRef = (ns: string, name?: string): ResourceRef => ({ group: 'apps', version: 'v1', resource: 'deployments', namespace: ns, name });
export const scaledObjectRef = (ns: string, name?: string): ResourceRef => ({
  group: 'keda.sh',
  version: 'v1alpha1',
  resource: 'scaledobjects',
  namespace: ns,
  name,
});
export const hpaRef = (ns: string, name?: string): ResourceRef => ({
  group: 'autoscaling',
  version: 'v2',
  resource: 'horizontalpodautoscalers',
  namespace: ns,
  name,
});

/**
 * The KEDA objects of deploy/keda as the real `kubectl kustomize` renders them with `components` (paths
 * relative to the project), placed in namespace `ns`.
 */
export async function renderedKeda(ns: string, components: string[] = []): Promise<Record<string, unknown>[]> {
  return (await renderOverlay(['deploy/keda'], components)).map((d) => {
    const o = d as Record<string, unknown>;
    return { ...o, metadata: { ...(o['metadata'] as object), namespace: ns } };
  });
}

/** The one object of `kind` among `objects`. */
export function onlyOf(objects: Record<string, unknown>[], kind: string): Record<string, unknown> {
  const found = objects.filter((o) => o['kind'] === kind);
  if (found.length !== 1) throw new Error(`deploy/keda renders ${found.length} ${kind} objects`);
  return found[0] as Record<string, unknown>;
}

/** A Deployment named like the worker's; nothing runs its pods here, KEDA only sets its replicas. */
export function standInDeployment(): Record<string, unknown> {
  const labels = { app: WORKER };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: WORKER },
    spec: {
      replicas: 0,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'worker', image: 'ebb:stand-in', args: ['worker'] }] } },
    },
  };
}

export interface ReplicaChange {
  at: number;
  replicas: number;
}

export interface Follower {
  readonly changes: readonly ReplicaChange[];
  readonly workers: readonly EbbProcess[];
  replicas(): number;
  stop(): Promise<void>;
}

/** Reads the Deployment every 50 ms, records each replica change, runs one `ebb worker` while replicas > 0. */
export function followDeployment(rest: KubeRest, ns: string, startWorker: (name: string) => EbbProcess): Follower {
  const changes: ReplicaChange[] = [];
  const workers: EbbProcess[] = [];
  const ac = new AbortController();
  let current: EbbProcess | undefined;
  let last = -1;
  const loop = (async () => {
    while (!ac.signal.aborted) {
      const d = await rest.get<{ spec: { replicas?: number } }>(deploymentRef(ns, WORKER), ac.signal).catch(() => undefined);
      if (d) {
        const replicas = d.spec.replicas ?? 1;
        if (replicas !== last) changes.push({ at: Date.now(), replicas });
        last = replicas;
        if (replicas > 0 && !current?.running()) {
          current = startWorker(`worker-${workers.length}`);
          workers.push(current);
        } else if (replicas === 0 && current) {
          const stopping = current;
          current = undefined;
          await stopping.stop();
        }
      }
      await sleep(50, ac.signal).catch(() => undefined);
    }
  })();
  return {
    changes,
    workers,
    replicas: () => last,
    stop: async () => {
      ac.abort();
      await loop;
      await current?.stop();
    },
  };
}
