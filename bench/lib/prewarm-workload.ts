/**
 * The workload of the pre-warm benchmarks: an App or an upstream StatefulSet with the same pod template (one
 * container with a readiness probe, one pod per node through required pod anti-affinity, no claims), and what
 * they measure it with: status settled, the App's pre-warm status polled during a run.
 */
import { API_VERSION, APP_KIND, appRef } from '../../src/api/group.ts';
import { waitFor } from '../../src/common/wait.ts';
import { core } from '../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../src/kube/rest.ts';
import { readWorkload, SET_LABEL, statusSettled, workloadRef, type Workload } from './workloads.ts';

export function prewarmTemplate(name: string, image: string): Record<string, unknown> {
  return {
    metadata: { labels: { [SET_LABEL]: name } },
    spec: {
      terminationGracePeriodSeconds: 1,
      // One pod per node: every pod needs its own pull.
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { [SET_LABEL]: name } }, topologyKey: 'kubernetes.io/hostname' }],
        },
      },
      containers: [
        { name: 'main', image, readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 }, resources: { requests: { cpu: '10m', memory: '16Mi' } } },
      ],
    },
  };
}

/**
 * Creates the headless Service and the App (`app`: its spec fields beside replicas, selector, serviceName,
 * podManagementPolicy and template) or, for `w.kind` sts, the StatefulSet with the same fields.
 */
export async function createPrewarmWorkload(rest: KubeRest, w: Workload, image: string, app: Record<string, unknown> = {}): Promise<void> {
  const metadata = { name: w.name, namespace: w.namespace };
  await rest.create(core('services', w.namespace), {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: { clusterIP: 'None', selector: { [SET_LABEL]: w.name } },
  });
  const spec = {
    replicas: w.replicas,
    selector: { matchLabels: { [SET_LABEL]: w.name } },
    serviceName: w.name,
    podManagementPolicy: w.policy,
    template: prewarmTemplate(w.name, image),
  };
  if (w.kind === 'sts') {
    await rest.create({ ...workloadRef(w), name: undefined }, { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata, spec });
    return;
  }
  await rest.create({ ...appRef(w.namespace), name: undefined }, { apiVersion: API_VERSION, kind: APP_KIND, metadata, spec: { ...spec, ...app } });
}

export async function setPrewarmImage(rest: KubeRest, w: Workload, image: string): Promise<void> {
  await rest.patch(workloadRef(w), { spec: { template: prewarmTemplate(w.name, image) } }, PatchType.merge);
}

export async function setReplicas(rest: KubeRest, w: Workload, replicas: number): Promise<void> {
  await rest.patch(workloadRef(w), { spec: { replicas } }, PatchType.merge);
}

/** Waits until the workload's status says every one of `replicas` is updated, ready and available. */
export async function waitSettled(rest: KubeRest, w: Workload, replicas: number, timeoutMs: number): Promise<void> {
  await waitFor(async () => (statusSettled(await readWorkload(rest, w), replicas) ? true : undefined), {
    timeoutMs,
    intervalMs: 200,
    what: `${w.name} settled`,
  });
}

interface PrewarmStatus {
  nodesRequested?: number;
  nodesPulled?: number;
  lookahead?: number;
  podsOnWarmNodes?: number;
}

export interface PrewarmSeen {
  /** Each change of the reported lookahead once (`all`: every pod left), joined by arrows; `–` when never reported. */
  lookahead: string;
  /** The highest `status.prewarm.podsOnWarmNodes` reported (the status goes once pre-warming is over). */
  podsOnWarmNodes: number;
}

/** Polls the App's `status.prewarm` until `done` aborts. */
export async function watchPrewarm(rest: KubeRest, w: Workload, done: AbortSignal): Promise<PrewarmSeen> {
  const seen: string[] = [];
  let landed = 0;
  while (!done.aborted) {
    const app = await rest.get<{ status?: { prewarm?: PrewarmStatus } }>(appRef(w.namespace, w.name));
    const prewarm = app.status?.prewarm;
    const now = prewarm === undefined ? undefined : String(prewarm.lookahead ?? 'all');
    if (now !== undefined && seen.at(-1) !== now) seen.push(now);
    landed = Math.max(landed, prewarm?.podsOnWarmNodes ?? 0);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { lookahead: seen.join('→') || '–', podsOnWarmNodes: landed };
}

/** Waits until the App's pre-warm status reports `nodes` nodes requested and pulled (a warm pool filled). */
export async function waitPrewarmPulled(rest: KubeRest, w: Workload, nodes: number, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      const app = await rest.get<{ status?: { prewarm?: PrewarmStatus } }>(appRef(w.namespace, w.name));
      const p = app.status?.prewarm;
      return p?.nodesRequested === nodes && p.nodesPulled === nodes ? true : undefined;
    },
    { timeoutMs, intervalMs: 500, what: `${w.name}: ${nodes} nodes pre-warmed` },
  );
}
