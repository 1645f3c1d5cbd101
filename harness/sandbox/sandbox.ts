import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Logger } from '../../src/common/log.ts';
import type { KubeRest } from '../../src/kube/rest.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';
import { installCrds } from './crds.ts';
import { CRD_DIR, DEFAULT_BIN_DIR } from './paths.ts';
import { startRedis } from './redis.ts';
import { SimRegistry } from './node/image-store.ts';
import { startSimNodes, type SimCluster } from './node/cluster.ts';
import type { KubeletTimings } from './node/timings.ts';
import { startProvisioner } from './storage/provisioner.ts';
import { startRealNodes, type RealNodes } from './real-node/real-nodes.ts';

export interface SandboxOptions {
  dir: string;
  nodes: number;
  log: Logger;
  signal?: AbortSignal | undefined;
  binDir?: string | undefined;
  timings?: Partial<KubeletTimings> | undefined;
  /** Extra kube-controller-manager controllers (e.g. `statefulset-controller` for benchmarks). */
  extraControllers?: string[] | undefined;
  /** kube-controller-manager's `--kube-api-qps` and `--kube-api-burst`; unset: its defaults (20, 30). */
  controllerManagerClientLimits?: { qps: number; burst: number } | undefined;
  /** Serve the apiserver's `/debug/pprof` (benchmarks that profile it). */
  apiserverProfiling?: boolean | undefined;
  /** Real nodes (kubelet, containerd, runc) beside the simulated ones: 0 (default) to 4; needs root. */
  realNodes?: number | undefined;
}

export interface Sandbox {
  dir: string;
  kubeconfig: string;
  redisUrl: string;
  /** The sandbox Redis's process id (for CPU and memory readings). */
  redisPid: number;
  rest: KubeRest;
  nodeNames: string[];
  registry: SimRegistry;
  sim: SimCluster;
  controlPlane: ControlPlane;
  /** The real nodes, their registry and images, when `realNodes` was above 0. */
  real: RealNodes | undefined;
  stop(): Promise<void>;
}

export function nodeNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `sim-node-${i}`);
}

/**
 * Starts the whole sandbox: control plane, Redis, CRDs, storage provisioner, simulated nodes and, when asked,
 * real nodes with their registry (then `env` also exports EBB_SANDBOX_REGISTRY). Writes
 * `<dir>/kubeconfig` and `<dir>/env`. stop() stops every child by PID and removes nothing on disk.
 */
export async function startSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const dir = resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  const internal = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, internal.signal]) : internal.signal;
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    internal.abort();
    for (const s of stops.reverse()) await s().catch((err: unknown) => opts.log.warn({ err: String(err) }, 'sandbox stop step failed'));
  };
  try {
    const t0 = Date.now();
    const [controlPlane, redis] = await Promise.all([
      startControlPlane({
        dir,
        binDir: opts.binDir ?? DEFAULT_BIN_DIR,
        log: opts.log,
        signal,
        extraControllers: opts.extraControllers,
        controllerManagerClientLimits: opts.controllerManagerClientLimits,
        apiserverProfiling: opts.apiserverProfiling,
      }),
      startRedis({ dir: join(dir, 'redis'), signal, log: opts.log }),
    ]);
    stops.push(
      () => controlPlane.stop(),
      () => redis.stop(),
    );
    opts.log.info({ ms: Date.now() - t0, server: controlPlane.server }, 'control plane ready');
    const rest = controlPlane.rest;
    await installCrds(rest, CRD_DIR, signal);
    const provisioner = await startProvisioner({ rest, dir, log: opts.log, signal });
    stops.push(() => provisioner.stop());
    const registry = new SimRegistry();
    const names = nodeNames(opts.nodes);
    const sim = await startSimNodes({ rest, names, dir, registry, timings: opts.timings, log: opts.log, signal });
    stops.push(() => sim.stop());
    let real: RealNodes | undefined;
    if ((opts.realNodes ?? 0) > 0) {
      const binDir = opts.binDir ?? DEFAULT_BIN_DIR;
      real = await startRealNodes({ dir, count: opts.realNodes ?? 0, rest, pki: controlPlane.pki, server: controlPlane.server, binDir, log: opts.log, signal });
      stops.push(() => real?.stop() ?? Promise.resolve());
    }
    // Sourced by a shell (`source <dir>/env`): exported, so kubectl and ebb started from that shell see them.
    const registryLine = real ? `export EBB_SANDBOX_REGISTRY=${real.registry.host}\n` : '';
    const env = `export KUBECONFIG=${controlPlane.kubeconfig}\nexport EBB_REDIS_URL=${redis.url}\n${registryLine}`;
    await writeFile(join(dir, 'env'), env);
    opts.log.info({ ms: Date.now() - t0, nodes: names.length, realNodes: real?.nodes.length ?? 0 }, 'sandbox ready');
    return {
      dir,
      kubeconfig: controlPlane.kubeconfig,
      redisUrl: redis.url,
      redisPid: redis.pid,
      rest,
      nodeNames: names,
      registry,
      sim,
      controlPlane,
      real,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
