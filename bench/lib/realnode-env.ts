/**
 * The real-node benchmarks' environment: a sandbox with one real node or more (kubelet, containerd, runc; one
 * simulated node beside them, unused), kube-controller-manager's StatefulSet controller, ebb's watcher and
 * worker in this process and, when asked, each node's `ebb daemon` against its real containerd.
 *
 * The real node is always torn down: on a normal end, on an error, and on SIGINT/SIGTERM (the signal aborts
 * every wait, then stop() runs). After the stop the host is checked for what a real node changes (the ledger
 * in /run/ebb-real-node, bridges ebbrn<i>) and whatever is left is reverted through the ledger. A run killed
 * without a chance to stop leaves the ledger; the next start of a real node reverts it first.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger, type Logger } from '../../src/common/log.ts';
import { waitFor } from '../../src/common/wait.ts';
import { CriClient, unixEndpoint } from '../../src/cri/client.ts';
import { core } from '../../src/kube/paths.ts';
import { KubeRest, loadKubeConfig } from '../../src/kube/rest.ts';
import { parseWatcherConfig } from '../../src/watcher/config.ts';
import { startWatcher } from '../../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../../src/workers/config.ts';
import { reconcilers } from '../../src/workers/reconcilers.ts';
import { startWorker } from '../../src/workers/worker.ts';
import { startNodeDaemons, type NodeDaemons } from '../../harness/sandbox/daemons.ts';
import { LEDGER_PATH } from '../../harness/sandbox/real-node/host-apply.ts';
import { realHostOps } from '../../harness/sandbox/real-node/host-ops.ts';
import { MAX_REAL_NODES, cleanStaleHostChanges, nodeNetwork, type RealNode } from '../../harness/sandbox/real-node/real-nodes.ts';
import { startSandbox, type Sandbox } from '../../harness/sandbox/sandbox.ts';
import { benchEbbEnv } from './ebb-env.ts';

export interface RealEnv {
  sb: Sandbox;
  rest: KubeRest;
  /** The first real node (its CRI client is `cri`). */
  node: RealNode;
  /** Every real node, with a CRI client each (the first is `node` and `cri`). */
  nodes: { node: RealNode; cri: CriClient }[];
  /** `127.0.0.1:<port>` of the sandbox registry. */
  registry: string;
  registryLog: string;
  cri: CriClient;
  daemons: NodeDaemons | undefined;
  log: Logger;
  stop(): Promise<void>;
}

/** Aborts on SIGINT/SIGTERM (once); a second signal exits at once (the next real-node start cleans up). */
export function interruptSignal(): AbortSignal {
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => {
    if (ac.signal.aborted) process.exit(130);
    process.stderr.write(`${sig}: stopping the real node, then exiting\n`);
    ac.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return ac.signal;
}

/** `promise`, or a rejection as soon as `signal` aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    promise.then(resolve, reject);
  });
}

/** Starts the environment with `realNodes` real nodes (default 1), an `ebb daemon` on each when `daemon`. */
export async function startRealEnv(opts: { dir: string; daemon: boolean; signal: AbortSignal; realNodes?: number }): Promise<RealEnv> {
  const log = createLogger('bench', 'warn');
  const realNodes = opts.realNodes ?? 1;
  const sb = await startSandbox({ dir: opts.dir, nodes: 1, realNodes, log, signal: opts.signal, extraControllers: ['statefulset-controller'] });
  const stops: (() => Promise<void>)[] = [() => sb.stop()];
  const stop = async (): Promise<void> => {
    for (const s of stops.reverse()) await s().catch((err: unknown) => log.warn({ err: String(err) }, 'bench stop step failed'));
    await checkHostClean(log);
  };
  try {
    const node = sb.real?.nodes[0];
    if (!sb.real || !node) throw new Error('the sandbox started no real node');
    const rest = new KubeRest(loadKubeConfig(sb.kubeconfig));
    const nodes = sb.real.nodes.map((n) => ({ node: n, cri: CriClient.connect(unixEndpoint(n.criSocket)) }));
    stops.push(() => Promise.resolve(nodes.forEach((n) => n.cri.close())));
    const cri = nodes[0]?.cri;
    if (!cri) throw new Error('the sandbox started no real node');
    const cfg = benchEbbEnv(sb);
    const watcher = await startWatcher(parseWatcherConfig(cfg), log);
    stops.push(() => watcher.stop());
    const worker = await startWorker(parseWorkerConfig(cfg), log, reconcilers());
    stops.push(() => worker.stop());
    let daemons: NodeDaemons | undefined;
    if (opts.daemon) {
      daemons = await startNodeDaemons({ kubeconfig: sb.kubeconfig, nodes: nodes.map((n) => ({ name: n.node.name, criSocket: n.node.criSocket })), log });
      stops.push(() => daemons?.stop() ?? Promise.resolve());
    }
    return { sb, rest, node, nodes, registry: sb.real.registry.host, registryLog: join(sb.dir, 'logs', 'registry.log'), cri, daemons, log, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Reverts what a real node left on the host (ledger, bridge), if anything; says so on stderr. */
async function checkHostClean(log: Logger): Promise<void> {
  const ledger = await access(LEDGER_PATH).then(
    () => true,
    () => false,
  );
  let bridge = false;
  for (let i = 0; i < MAX_REAL_NODES; i++) {
    bridge ||= await realHostOps.ip(['link', 'show', nodeNetwork(i).bridge]).then(
      () => true,
      () => false,
    );
  }
  if (!ledger && !bridge) return;
  process.stderr.write(`host not clean after stop (ledger ${ledger}, bridge ${bridge}): reverting through the ledger\n`);
  await cleanStaleHostChanges(realHostOps, log);
}

/** A fresh namespace with its default ServiceAccount. */
export async function freshNamespace(rest: KubeRest, prefix: string, signal: AbortSignal): Promise<string> {
  const ns = `${prefix}-${Math.random().toString(16).slice(2, 6)}`;
  await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await waitFor(() => rest.get(core('serviceaccounts', ns, 'default')), { timeoutMs: 60_000, signal, what: 'default ServiceAccount' });
  return ns;
}

/**
 * Runs a real-node benchmark's `main` and exits when it is done: a watch left open by a failed step must not keep
 * the process alive (the real node is stopped by then).
 */
export async function runToExit(main: () => Promise<void>): Promise<never> {
  try {
    await main();
    process.exit(0);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  }
}
