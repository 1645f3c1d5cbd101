/**
 * The product's node daemon for simulated nodes: one `ebb daemon` per node, against that node's CRI socket,
 * each with its own apiserver client, logger and HTTP port — what the DaemonSet runs on a real cluster. They
 * run in this process (startDaemon, wired as `ebb daemon` wires it); a test that must SIGKILL a daemon spawns
 * `ebb daemon` as a process instead.
 */
import type { Logger } from '../../src/common/log.ts';
import { unixEndpoint } from '../../src/cri/client.ts';
import { criImageRuntime, type CriRuntime } from '../../src/daemon/cri-adapter.ts';
import { startDaemon, type RunningDaemon } from '../../src/daemon/daemon.ts';
import { daemonOptions, type DaemonOptions } from '../../src/daemon/options.ts';
import { KubeRest, loadKubeConfig } from '../../src/kube/rest.ts';

/** What a daemon needs of its node. */
export interface DaemonNode {
  name: string;
  /** Absolute path of the node's CRI socket. */
  criSocket: string;
}

export type DaemonOverrides = Partial<Omit<DaemonOptions, 'nodeName' | 'criEndpoint'>>;

export interface NodeDaemonsOptions {
  kubeconfig: string;
  nodes: readonly DaemonNode[];
  log: Logger;
  /** Options of every daemon; by default the product's, with HTTP on 127.0.0.1 and a free port each. */
  options?: DaemonOverrides | undefined;
}

export interface NodeDaemon {
  node: string;
  /** Where the daemon serves /healthz, /readyz and /metrics on 127.0.0.1 (or `options.httpAddress`). */
  httpPort: number;
  daemon: RunningDaemon;
}

export interface NodeDaemons {
  /** By node name, in the order the nodes were given. */
  daemons: ReadonlyMap<string, NodeDaemon>;
  /** Stops every daemon as SIGTERM does (pulls cancelled, final status write), then closes its CRI client. */
  stop(): Promise<void>;
}

interface Started {
  entry: NodeDaemon;
  runtime: CriRuntime;
}

/**
 * The options of one node's daemon: the product defaults, loopback HTTP on a free port, no disk guard (every node
 * of the sandbox shares the host's filesystem, whose usage is no one node's), then `overrides`.
 */
export function nodeDaemonOptions(node: DaemonNode, overrides: DaemonOverrides = {}): DaemonOptions {
  return daemonOptions({
    httpAddress: '127.0.0.1',
    httpPort: 0,
    imageFsHighPercent: 100,
    ...overrides,
    nodeName: node.name,
    criEndpoint: unixEndpoint(node.criSocket),
  });
}

async function startOne(node: DaemonNode, opts: NodeDaemonsOptions): Promise<Started> {
  const options = nodeDaemonOptions(node, opts.options);
  const runtime = criImageRuntime(options.criEndpoint, { pullTimeoutMs: options.pullTimeoutMs });
  try {
    const rest = new KubeRest(loadKubeConfig(opts.kubeconfig));
    const daemon = await startDaemon(options, { rest, runtime, log: opts.log.child({ node: node.name }) });
    return { entry: { node: node.name, httpPort: daemon.httpPort, daemon }, runtime };
  } catch (err) {
    runtime.close();
    throw err;
  }
}

async function stopOne(s: Started): Promise<void> {
  await s.entry.daemon.stop();
  s.runtime.close();
}

/** Starts one daemon per node; if any fails to start, the others are stopped and the error is thrown. */
export async function startNodeDaemons(opts: NodeDaemonsOptions): Promise<NodeDaemons> {
  const results = await Promise.allSettled(opts.nodes.map((n) => startOne(n, opts)));
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(started.map(stopOne));
    throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
  }
  let stopping: Promise<void> | undefined;
  return {
    daemons: new Map(started.map((s) => [s.entry.node, s.entry])),
    stop: () => (stopping ??= Promise.all(started.map(stopOne)).then(() => undefined)),
  };
}

/** Banner lines naming each daemon and its metrics address; `undefined`: daemons were turned off. */
export function daemonBanner(daemons: NodeDaemons | undefined, host = '127.0.0.1'): string[] {
  if (!daemons) return ['  node daemons: off (--no-daemons)'];
  if (daemons.daemons.size === 0) return ['  node daemons: none (no simulated nodes)'];
  const lines = [...daemons.daemons.values()].map((d) => `    ${d.node}  http://${host}:${d.httpPort}/metrics`);
  return [`  node daemons: ${daemons.daemons.size} (ebb daemon per simulated node: ImageList <node> is pulled into that node's images)`, ...lines];
}
