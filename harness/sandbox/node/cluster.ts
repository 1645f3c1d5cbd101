/**
 * Starts the simulated nodes of a sandbox: for each name a Node with its Lease, a pod syncer (the kubelet),
 * an image store shared with a CRI ImageService on `<dir>/nodes/<name>/cri.sock`. Timings and faults can be
 * changed per node at run time. Stopping leaves Nodes and pods as they are, like kubelets that went away.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from '../../../src/common/log.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { nodeInternalIP, PodIPPool, podCIDR } from './addresses.ts';
import { serveImageService } from './cri-server.ts';
import { ImageStore, type SimRegistry } from './image-store.ts';
import { startPodSyncer, type PodSyncer } from './kubelet.ts';
import { delayFn, serialSlot } from './node-context.ts';
import { startNodeAgent, type NodeAgent } from './node-agent.ts';
import { defaultNodeShape, resourceList, type NodeShape, type NodeTaint } from './node-object.ts';
import { noEvents, restEventSink, restPodApi } from './pod-api.ts';
import { defaultFaults, defaultTimings, scaled, type KubeletFaults, type KubeletTimings } from './timings.ts';

export interface SimNode {
  name: string;
  /** The node's image store: what its kubelet pulls into and its CRI ImageService serves. */
  store: ImageStore;
  /** Absolute path of the node's CRI ImageService socket. */
  criSocket: string;
  internalIP: string;
  podCIDR: string;
}

export interface SimCluster {
  nodes: Map<string, SimNode>;
  /** Changes timings of one node, or of every node with `'*'`. */
  setTimings(name: string, timings: Partial<KubeletTimings>): void;
  setFaults(name: string, faults: Partial<KubeletFaults>): void;
  /** Stops one node's kubelet, heartbeats and CRI service (a node that died); its pods stay as they are. */
  stopNode(name: string): Promise<void>;
  stop(): Promise<void>;
}

export interface SimNodesOptions {
  rest: KubeRest;
  names: string[];
  dir: string;
  registry: SimRegistry;
  timings?: Partial<KubeletTimings> | undefined;
  faults?: Partial<KubeletFaults> | undefined;
  /** Capacity of every node (defaults: 16 cpu, 64Gi, 110 pods). */
  shape?: Partial<NodeShape> | undefined;
  /** Taints every node registers with (e.g. a node only the pods of one test tolerate). */
  registerWithTaints?: readonly NodeTaint[] | undefined;
  /** Labels every node registers with (e.g. a node group's, which a warm pool selects). */
  registerWithLabels?: Readonly<Record<string, string>> | undefined;
  /** Record kubelet Events on pods (default true). */
  events?: boolean | undefined;
  /** Index of the first node in the address plan, when nodes are started in several batches. */
  firstIndex?: number | undefined;
  log: Logger;
  signal: AbortSignal;
}

/** Unix socket paths must stay below sun_path's limit (104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH = 100;

interface RunningNode {
  node: SimNode;
  timings: KubeletTimings;
  faults: KubeletFaults;
  abort: AbortController;
  agent?: NodeAgent;
  syncer?: PodSyncer;
  cri?: { close(): Promise<void> };
  stopped?: Promise<void>;
}

async function socketPathFor(dir: string, name: string, fallbackDirs: string[]): Promise<string> {
  const preferred = join(resolve(dir), 'nodes', name, 'cri.sock');
  if (Buffer.byteLength(preferred) <= MAX_SOCKET_PATH) return preferred;
  const short = await mkdtemp(join(tmpdir(), 'ebb-cri-'));
  fallbackDirs.push(short);
  const path = join(short, `${name}.sock`);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    throw new Error(
      `CRI socket path for node ${name} is too long (${Buffer.byteLength(preferred)} bytes under ${dir}, ${Buffer.byteLength(path)} under ${short}); use a shorter sandbox dir`,
    );
  }
  return path;
}

async function startNode(r: RunningNode, index: number, opts: SimNodesOptions, shape: NodeShape): Promise<void> {
  const { name } = r.node;
  const log = opts.log.child({ node: name });
  const signal = AbortSignal.any([opts.signal, r.abort.signal]);
  await mkdir(join(resolve(opts.dir), 'nodes', name), { recursive: true });
  r.cri = await serveImageService({ socketPath: r.node.criSocket, store: r.node.store, log });
  r.agent = await startNodeAgent({
    rest: opts.rest,
    id: {
      name,
      internalIP: r.node.internalIP,
      podCIDR: r.node.podCIDR,
      shape,
      bootID: randomUUID(),
      taints: opts.registerWithTaints,
      labels: opts.registerWithLabels,
    },
    store: r.node.store,
    timings: () => r.timings,
    log,
    signal,
  });
  r.syncer = startPodSyncer({
    rest: opts.rest,
    node: name,
    allocatable: resourceList(shape),
    log,
    signal,
    context: {
      name,
      hostIP: r.node.internalIP,
      store: r.node.store,
      timings: () => r.timings,
      faults: () => r.faults,
      api: restPodApi(opts.rest),
      events: opts.events === false ? noEvents : restEventSink(opts.rest, name, log),
      ips: new PodIPPool(index),
      pullSlot: serialSlot(() => r.timings.serializeImagePulls),
      log,
      now: Date.now,
      delay: delayFn,
      lifetime: signal,
    },
  });
}

async function stopNode(r: RunningNode): Promise<void> {
  r.stopped ??= (async () => {
    r.abort.abort();
    await Promise.all([r.agent?.running, r.syncer?.running, r.syncer?.drain()]);
    await r.cri?.close();
  })();
  return r.stopped;
}

/** Starts simulated nodes; resolves once every node is registered, Ready and untainted, and serves CRI. */
export async function startSimNodes(opts: SimNodesOptions): Promise<SimCluster> {
  const shape: NodeShape = { ...defaultNodeShape, ...opts.shape };
  const running = new Map<string, RunningNode>();
  const fallbackDirs: string[] = [];
  const first = opts.firstIndex ?? 0;
  for (const [i, name] of opts.names.entries()) {
    const r: RunningNode = {
      timings: { ...defaultTimings, ...opts.timings },
      faults: { ...defaultFaults, ...opts.faults },
      abort: new AbortController(),
      node: {
        name,
        criSocket: await socketPathFor(opts.dir, name, fallbackDirs),
        internalIP: nodeInternalIP(first + i),
        podCIDR: podCIDR(first + i),
        store: new ImageStore({ registry: opts.registry, pullMs: () => scaled(r.timings.pullMs, r.faults) }),
      },
    };
    running.set(name, r);
  }
  const stop = async (): Promise<void> => {
    await Promise.all([...running.values()].map(stopNode));
    await Promise.all(fallbackDirs.map((d) => rm(d, { recursive: true, force: true })));
  };
  try {
    await Promise.all([...running.values()].map((r, i) => startNode(r, first + i, opts, shape)));
  } catch (err) {
    await stop();
    throw err;
  }
  const targets = (name: string): RunningNode[] => {
    if (name === '*') return [...running.values()];
    const r = running.get(name);
    if (!r) throw new Error(`no simulated node named ${name}`);
    return [r];
  };
  return {
    nodes: new Map([...running].map(([name, r]) => [name, r.node])),
    setTimings(name, timings) {
      for (const r of targets(name)) r.timings = { ...r.timings, ...timings };
    },
    setFaults(name, faults) {
      for (const r of targets(name)) r.faults = { ...r.faults, ...faults };
    },
    async stopNode(name) {
      await Promise.all(targets(name).map(stopNode));
    },
    stop,
  };
}
