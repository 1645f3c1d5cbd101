/**
 * Helpers of the control-plane restart test: a private sandbox with the in-process watcher and worker on a
 * Redis of the test's own (so the test can stop it), Apps read back from that sandbox, and the check that a
 * rollout is complete with no pod left mid-update.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../../../src/api/app.ts';
import { API_VERSION, APP_KIND, appRef } from '../../../src/api/group.ts';
import { Label } from '../../../src/api/keys.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { getOrdinal, getPodRevision, isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { reconcilers } from '../../../src/workers/reconcilers.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { startSandbox, type Sandbox } from '../../../harness/sandbox/sandbox.ts';
import { startRedis, type RedisServer } from '../../../harness/sandbox/redis.ts';
import { captureLog, type CapturedLog } from './log-capture.ts';
import { kubeconfigServer, proxiedKubeconfig, startTcpProxy, type TcpProxy } from '../watcher/helpers.ts';
import { gateOf, imagesOf, isAnnotated } from './pod-history.ts';
import { image, template } from './harness.ts';

export type UpdatePolicy = 'InPlaceIfPossible' | 'ReCreate';

export interface Rig {
  sb: Sandbox;
  rest: KubeRest;
  ns: string;
  /** Replaced when the test starts Redis again. */
  redis: RedisServer;
  redisDir: string;
  watcher: RunningWatcher;
  worker: RunningWorker;
  /** The worker's only way to the apiserver (the watcher connects directly): cut it to isolate the worker. */
  workerLink: TcpProxy;
  apiserver: { host: string; port: number };
  logs: CapturedLog;
  stop(): Promise<void>;
}

/**
 * A sandbox of the test's own (it restarts etcd and the apiserver), a Redis of its own, one namespace, and
 * the watcher and a worker in-process with a small retry budget (`env` adds or overrides settings).
 */
export async function startRig(env: Record<string, string>): Promise<Rig> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-cp-'));
  const sb = await startSandbox({ dir, nodes: 2, log: createLogger('restart-sandbox', process.env['EBB_RESTART_SANDBOX_LOG'] ?? 'error') });
  const redisDir = join(dir, 'own-redis');
  const redis = await startRedis({ dir: redisDir });
  const rest = sb.rest;
  const ns = 'restarts';
  await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await waitFor(() => rest.get(core('serviceaccounts', ns, 'default')), { timeoutMs: 30_000, what: `ServiceAccount ${ns}/default` });
  const all = {
    KUBECONFIG: sb.kubeconfig,
    EBB_REDIS_URL: redis.url,
    EBB_NAMESPACES: ns,
    EBB_QUEUE_PREFIX: '{ebb-restarts}',
    EBB_HTTP_PORT: '0',
    EBB_SCALER_PORT: '0',
    EBB_HTTP_ADDRESS: '127.0.0.1',
    EBB_BOARD: 'false',
    ...env,
  };
  const logs = captureLog('it-restarts');
  const apiserver = await kubeconfigServer(sb.kubeconfig);
  const workerLink = await startTcpProxy(apiserver);
  const viaLink = await proxiedKubeconfig(sb.kubeconfig, join(dir, 'worker.kubeconfig'), workerLink.port);
  const watcher = await startWatcher(parseWatcherConfig(all), logs.log);
  const worker = await startWorker(parseWorkerConfig({ ...all, KUBECONFIG: viaLink }), logs.log, reconcilers());
  const rig: Rig = {
    sb,
    rest,
    ns,
    redis,
    redisDir,
    watcher,
    worker,
    workerLink,
    apiserver: { host: apiserver.host, port: apiserver.port },
    logs,
    stop: async () => {
      await worker.stop();
      await watcher.stop();
      await workerLink.stop();
      await rig.redis.stop();
      await sb.stop();
      if (!process.env['EBB_RESTART_KEEP']) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    },
  };
  return rig;
}

export async function createRolloutApp(rest: KubeRest, ns: string, name: string, policy: UpdatePolicy, gracePeriodSeconds = 0): Promise<void> {
  const spec = {
    replicas: gracePeriodSeconds > 0 ? 2 : 3,
    selector: { matchLabels: { app: name } },
    serviceName: name,
    template: template(name, 'v0'),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: policy, maxUnavailable: 1, inPlaceUpdateStrategy: { gracePeriodSeconds } } },
  };
  await rest.create<App>(appRef(ns), { apiVersion: API_VERSION, kind: APP_KIND, metadata: { name, namespace: ns }, spec });
}

export interface View {
  app: App;
  pods: Pod[];
}

export async function view(rest: KubeRest, ns: string, name: string): Promise<View> {
  const [app, list] = await Promise.all([rest.get<App>(appRef(ns, name)), rest.list<Pod>(core('pods', ns), { labelSelector: `${Label.app}=${name}` })]);
  return { app, pods: list.items.sort((a, b) => getOrdinal(name, a.metadata.name) - getOrdinal(name, b.metadata.name)) };
}

/** What keeps pod `p` from being done with the rollout to `tag` at `revision`. */
function podGaps(p: Pod, tag: string, revision: string | undefined): string[] {
  const n = p.metadata.name ?? '';
  const checks: [boolean, () => string][] = [
    [
      p.metadata.deletionTimestamp !== undefined,
      () =>
        `${n} terminating since ${p.metadata.deletionTimestamp ?? ''} on ${p.spec.nodeName ?? '?'} (finalizers ${JSON.stringify(p.metadata.finalizers ?? [])})`,
    ],
    [imagesOf(p)[0] !== image(tag), () => `${n} runs ${imagesOf(p)[0] ?? '?'}`],
    [!isRunningAndReady(p), () => `${n} not ready (${p.status?.phase ?? '?'} on ${p.spec.nodeName ?? 'no node'})`],
    [getPodRevision(p) !== revision, () => `${n} at ${getPodRevision(p) ?? '?'}`],
    [gateOf(p)?.status === 'False', () => `${n} gate False`],
    [isAnnotated(p), () => `${n} in-place state annotation`],
  ];
  return checks.filter(([bad]) => bad).map(([, what]) => what());
}

/** What keeps the rollout to `tag` from being complete; empty when it is. */
export function rolloutGaps(v: View, tag: string): string[] {
  const st = v.app.status;
  const want = v.app.spec.replicas ?? 1;
  const gaps: string[] = [];
  if (st?.observedGeneration !== v.app.metadata.generation) gaps.push('status not observed');
  if (v.pods.length !== want) gaps.push(`${v.pods.length} pods`);
  for (const p of v.pods) gaps.push(...podGaps(p, tag, st?.updateRevision));
  const statusDone = st?.currentRevision === st?.updateRevision && st?.updatedReplicas === want && st?.readyReplicas === want;
  if (!statusDone) gaps.push('status not at the update revision');
  return gaps;
}

/** Waits until the rollout to `tag` is complete; the error names what was still missing. */
export async function rolledOut(rest: KubeRest, ns: string, name: string, tag: string, timeoutMs: number): Promise<View> {
  let gaps: string[] = [];
  try {
    return await waitFor(
      async () => {
        const v = await view(rest, ns, name).catch(() => undefined);
        gaps = v ? rolloutGaps(v, tag) : ['apiserver not answering'];
        return gaps.length === 0 ? v : undefined;
      },
      { timeoutMs, intervalMs: 100, what: `App ${ns}/${name} rolled out to ${tag}` },
    );
  } catch (err) {
    throw new Error(`${String(err)}; still: ${gaps.join(', ')}`);
  }
}

const conditionAt = (p: Pod, type: string): number => Date.parse(p.status?.conditions?.find((c) => c.type === type)?.lastTransitionTime ?? '');

/**
 * The slowest pod's lags, in seconds (the apiserver's 1 s resolution): creation → scheduled (the
 * scheduler) and scheduled → Ready (the kubelet); tells whose reconnect after a restart was slow.
 */
export function podLags(pods: Pod[]): { scheduleS: number; readyS: number } {
  const lags = pods.map((p) => {
    const created = Date.parse(p.metadata.creationTimestamp ?? '');
    const scheduled = conditionAt(p, 'PodScheduled');
    return { scheduleS: (scheduled - created) / 1000, readyS: (conditionAt(p, 'Ready') - scheduled) / 1000 };
  });
  return { scheduleS: Math.max(0, ...lags.map((l) => l.scheduleS)), readyS: Math.max(0, ...lags.map((l) => l.readyS)) };
}
