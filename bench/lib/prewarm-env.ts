/**
 * The pre-warm benchmarks' sandbox: simulated nodes whose uncached pulls take `pullMs`, the real `ebb daemon`
 * on each node against its simulated CRI socket, and the watcher and worker in this process. Plus what the
 * benchmarks measure with: kubelet pulls (its `Pulling` Events), registry transfers per node, the daemons'
 * counters, and pre-warm pulls in progress as the ImageLists say.
 */
import { randomBytes } from 'node:crypto';
import { API_VERSION, imageListRef } from '../../src/api/group.ts';
import type { ImageList } from '../../src/api/image-list.ts';
import { waitFor } from '../../src/common/wait.ts';
import { createLogger } from '../../src/common/log.ts';
import { core } from '../../src/kube/paths.ts';
import { KubeRest, loadKubeConfig } from '../../src/kube/rest.ts';
import { parseWatcherConfig } from '../../src/watcher/config.ts';
import { startWatcher } from '../../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../../src/workers/config.ts';
import { reconcilers } from '../../src/workers/reconcilers.ts';
import { startWorker } from '../../src/workers/worker.ts';
import { startNodeDaemons, type NodeDaemons } from '../../harness/sandbox/daemons.ts';
import { startSimNodes, type SimCluster } from '../../harness/sandbox/node/cluster.ts';
import { realisticProfile } from '../../harness/sandbox/node/timings.ts';
import { startSandbox, type Sandbox } from '../../harness/sandbox/sandbox.ts';
import { benchEbbEnv } from './ebb-env.ts';

export interface PrewarmEnv {
  sb: Sandbox;
  rest: KubeRest;
  daemons: NodeDaemons;
  /** The worker's queue key prefix (the pull budget lives under it). */
  prefix: string;
  /**
   * A node joining the running cluster: one more simulated node (same registry and timings, registered with
   * `labels`), then its daemon, as a DaemonSet would start one. Resolves once both run; stopped with the env.
   */
  joinNode(name: string, labels: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

export const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);

/** `nodes` simulated nodes, every uncached pull `pullMs`; `env` adds worker settings (e.g. the pull budget). */
export async function startPrewarmEnv(dir: string, nodes: number, pullMs: number, env: Record<string, string> = {}): Promise<PrewarmEnv> {
  const log = createLogger('bench', 'warn');
  const timings = { ...realisticProfile, pullMs, volumeAttachMs: 0 };
  const sb = await startSandbox({ dir, nodes, log, timings, extraControllers: ['statefulset-controller'] });
  const rest = new KubeRest(loadKubeConfig(sb.kubeconfig));
  const criNodes = [...sb.sim.nodes.values()].map((n) => ({ name: n.name, criSocket: n.criSocket }));
  const daemons = await startNodeDaemons({ kubeconfig: sb.kubeconfig, nodes: criNodes, log });
  const cfg = { ...benchEbbEnv(sb), ...env };
  const watcher = await startWatcher(parseWatcherConfig(cfg), log);
  const worker = await startWorker(parseWorkerConfig(cfg), log, reconcilers());
  const joined: { sim: SimCluster; daemons: NodeDaemons }[] = [];
  const lifetime = new AbortController();
  return {
    sb,
    rest,
    daemons,
    prefix: cfg['EBB_QUEUE_PREFIX'] ?? '',
    joinNode: async (name, labels) => {
      const firstIndex = nodes + joined.length;
      const opts = { rest: sb.rest, names: [name], dir, registry: sb.registry, timings, registerWithLabels: labels, firstIndex, log, signal: lifetime.signal };
      const sim = await startSimNodes(opts);
      const node = sim.nodes.get(name)!;
      joined.push({ sim, daemons: await startNodeDaemons({ kubeconfig: sb.kubeconfig, nodes: [{ name, criSocket: node.criSocket }], log }) });
    },
    stop: async () => {
      await worker.stop();
      await watcher.stop();
      for (const j of joined) await j.daemons.stop();
      await daemons.stop();
      lifetime.abort();
      for (const j of joined) await j.sim.stop();
      await sb.stop();
    },
  };
}

export async function benchNamespace(rest: KubeRest, prefix: string): Promise<string> {
  const ns = `${prefix}-${randomBytes(2).toString('hex')}`;
  await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await waitFor(() => rest.get(core('serviceaccounts', ns, 'default')), { timeoutMs: 60_000, what: 'default ServiceAccount' });
  return ns;
}

/**
 * Puts `image` on every node through ImageLists (field manager `bench-<what>`) and waits until each daemon
 * reports it Pulled: the old image before any workload is created (setup, not measured), and the new one for
 * the floor.
 */
export async function prePullEverywhere(env: PrewarmEnv, image: string, what: string): Promise<void> {
  for (const node of env.sb.nodeNames) {
    const body = { apiVersion: API_VERSION, kind: 'ImageList', metadata: { name: node }, spec: { images: [{ image }] } };
    await env.rest.apply(imageListRef(node), body, `bench-${what}`);
  }
  const pulled = async (node: string): Promise<boolean> => {
    const list = await env.rest.get<ImageList>(imageListRef(node)).catch(() => undefined);
    return list?.status?.images?.some((s) => s.image === image && s.phase === 'Pulled') === true;
  };
  await waitFor(async () => ((await Promise.all(env.sb.nodeNames.map(pulled))).every(Boolean) ? true : undefined), {
    timeoutMs: 600_000,
    intervalMs: 500,
    what: `pre-pull ${what}`,
  });
}

export async function kubeletPullsSince(env: PrewarmEnv, ns: string, sinceMs: number): Promise<number> {
  const events = await env.rest.list<{ reason?: string; firstTimestamp?: string; eventTime?: string }>(core('events', ns), { fieldSelector: 'reason=Pulling' });
  return events.items.filter((e) => Date.parse(e.firstTimestamp ?? e.eventTime ?? '') >= Math.floor(sinceMs / 1000) * 1000).length;
}

/**
 * Pods of `ns` created since `sinceMs` whose kubelet never pulled (no `Pulling` Event for the pod): pods that
 * found their images on their node, e.g. a recreated or new pod that landed on a pre-warmed node.
 */
export async function newPodsWithoutPull(env: PrewarmEnv, ns: string, sinceMs: number): Promise<number> {
  const pulling = await env.rest.list<{ involvedObject?: { uid?: string } }>(core('events', ns), { fieldSelector: 'reason=Pulling' });
  const pulled = new Set(pulling.items.map((e) => e.involvedObject?.uid));
  const pods = await env.rest.list<{ metadata: { uid?: string; creationTimestamp?: string } }>(core('pods', ns));
  const since = Math.floor(sinceMs / 1000) * 1000;
  return pods.items.filter((p) => Date.parse(p.metadata.creationTimestamp ?? '') >= since && !pulled.has(p.metadata.uid)).length;
}

export const transfers = (env: PrewarmEnv): Map<string, number> => new Map([...env.sb.sim.nodes.values()].map((n) => [n.name, n.store.pullCount]));

export async function daemonCounters(env: PrewarmEnv): Promise<{ pulls: number; writes: number }> {
  let pulls = 0;
  let writes = 0;
  for (const d of env.daemons.daemons.values()) {
    const text = await (await fetch(`http://127.0.0.1:${d.httpPort}/metrics`)).text();
    for (const line of text.split('\n')) {
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (line.startsWith('ebb_daemon_pulls_total{') && line.includes('result="success"')) pulls += value;
      if (line.startsWith('ebb_daemon_status_writes_total{') && line.includes('result="ok"')) writes += value;
    }
  }
  return { pulls, writes };
}

/** The images each pre-warm field manager (`ebb-prewarm/<ns>/<app>`) lists in `list`, from its managedFields. */
function prewarmEntries(list: ImageList): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const managed = (list.metadata as { managedFields?: { manager?: string; fieldsV1?: { 'f:spec'?: { 'f:images'?: Record<string, unknown> } } }[] })
    .managedFields;
  for (const m of managed ?? []) {
    if (!m.manager?.startsWith('ebb-prewarm/')) continue;
    const images = Object.keys(m.fieldsV1?.['f:spec']?.['f:images'] ?? {}).flatMap((k) => {
      if (!k.startsWith('k:')) return [];
      const image = (JSON.parse(k.slice(2)) as { image?: string }).image;
      return image ? [image] : [];
    });
    if (images.length > 0) out.set(m.manager, images);
  }
  return out;
}

/**
 * Pre-warm pulls in progress now, as the ImageLists say (what the budget counts): per ImageList, each App whose
 * entries are not all Pulled or Failed yet counts one.
 */
export async function prewarmPullsInProgress(rest: KubeRest): Promise<number> {
  const lists = (await rest.list<ImageList>(imageListRef())).items;
  let n = 0;
  for (const list of lists) {
    const phases = new Map((list.status?.images ?? []).map((s) => [s.image, s.phase]));
    for (const images of prewarmEntries(list).values()) if (images.some((i) => phases.get(i) !== 'Pulled' && phases.get(i) !== 'Failed')) n++;
  }
  return n;
}
