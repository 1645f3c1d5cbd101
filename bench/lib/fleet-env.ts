/** The fleet benchmark's sandbox (lib/../fleet.ts): control plane, namespaces, request snapshots, and its waits. */
import { sleep, waitFor } from '../../src/common/wait.ts';
import { createLogger } from '../../src/common/log.ts';
import { KubeRest, loadKubeConfig } from '../../src/kube/rest.ts';
import { startSandbox, type Sandbox } from '../../harness/sandbox/sandbox.ts';
import type { KubeletTimings } from '../../harness/sandbox/node/timings.ts';
import { createNamespace, inParallel } from '../watcher-lib.ts';
import { imageOf, isReady, type BenchPod } from './pod-timeline.ts';
import { countRequests, readApiserverRequests, type RequestSnapshot } from './requests.ts';
import { statusSettled, workloadRef, type ControllerKind, type Workload, type WorkloadObject } from './workloads.ts';

export interface FleetEnv {
  sb: Sandbox;
  rest: KubeRest;
  namespaces: string[];
  snapshot(): Promise<RequestSnapshot>;
  /** Control plane and Redis process ids by name. */
  pids: Record<string, number>;
}

export interface FleetSetup {
  dir: string;
  nodes: number;
  namespaces: number;
  timings: Partial<KubeletTimings> | undefined;
  /** kube-controller-manager's client limits; undefined: its defaults. */
  kcmLimits: { qps: number; burst: number } | undefined;
  /** Serve the apiserver's `/debug/pprof` (`--apiserver-prof`). */
  apiserverProfiling: boolean;
}

/** kube-controller-manager's garbage collector rediscovers API resources every 30 s. */
const GC_DISCOVERY_MS = 40_000;

export async function setupFleet(o: FleetSetup): Promise<FleetEnv> {
  const log = createLogger('bench', 'warn');
  const t0 = Date.now();
  const sb = await startSandbox({
    dir: o.dir,
    nodes: o.nodes,
    log,
    timings: o.timings,
    extraControllers: ['statefulset-controller'],
    controllerManagerClientLimits: o.kcmLimits,
    apiserverProfiling: o.apiserverProfiling,
  });
  const kubelet = countRequests(sb.rest);
  const rest = new KubeRest(loadKubeConfig(sb.kubeconfig));
  const bench = countRequests(rest);
  const namespaces = Array.from({ length: o.namespaces }, (_, i) => `fleet-${i}`);
  await inParallel(namespaces, 8, (ns) => createNamespace(rest, ns));
  // kube-controller-manager starts before the CRDs exist; its garbage collector rediscovers resources every
  // 30 s. Until it has, it GETs every App a pod names as owner, with backoff, which would be counted as ebb's.
  await sleep(Math.max(0, GC_DISCOVERY_MS - (Date.now() - t0)));
  const pids: Record<string, number> = { ...Object.fromEntries(sb.controlPlane.children.map((c) => [c.name, c.pid])), redis: sb.redisPid };
  const snapshot = async (): Promise<RequestSnapshot> => {
    const { total, conflicts } = await readApiserverRequests(rest);
    return { apiserver: total, conflicts, kubelet: kubelet.snapshot(), bench: bench.snapshot() };
  };
  return { sb, rest, namespaces, snapshot, pids };
}

/** Every fleet pod is at `image`, Ready and not terminating (`total` of them; none left over). */
export function fleetAt(total: number, image: string): (pods: BenchPod[]) => boolean {
  return (pods) => pods.length === total && pods.every((p) => imageOf(p) === image && isReady(p) && !p.metadata.deletionTimestamp);
}

/** Polls every workload's status, one LIST per namespace, until all say they are done. */
export async function waitFleetSettled(env: FleetEnv, kind: ControllerKind, sample: Workload | undefined, replicas: number, timeoutMs: number): Promise<void> {
  if (!sample) return;
  await waitFor(
    async () => {
      for (const ns of env.namespaces) {
        const { items } = await env.rest.list<WorkloadObject>({ ...workloadRef({ ...sample, namespace: ns }), name: undefined });
        if (!items.every((o) => statusSettled(o, replicas))) return undefined;
      }
      return true;
    },
    { timeoutMs, intervalMs: 2_000, what: `${kind} fleet status settled` },
  );
}
