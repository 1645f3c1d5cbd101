/**
 * Integration harness for the App reconcile: the real watcher and worker in-process against the sandbox
 * (real apiserver, scheduler, controller-manager, simulated kubelets, real Redis), one namespace and one
 * queue prefix per test file, and helpers that read everything back from the apiserver.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import type { App } from '../../../src/api/app.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { API_VERSION, APP_KIND, appRef } from '../../../src/api/group.ts';
import { Label } from '../../../src/api/keys.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { createLogger, type Logger } from '../../../src/common/log.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { reconcilers } from '../../../src/workers/reconcilers.ts';
import type { ControllerRevision, Event, PersistentVolumeClaim, Pod } from '../../../src/kube/types.ts';
import { getOrdinal, getPodRevision, isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { errorMessage } from '../../../src/common/errors.ts';

export interface Controller {
  ns: string;
  stop(): Promise<void>;
}

export interface ControllerOptions {
  /** The worker's and watcher's logger (default: JSON on stdout at warn). */
  log?: Logger;
  /** Settings on top of the harness's own (e.g. a shorter retry backoff). */
  env?: Record<string, string>;
}

/** The settings of an in-process watcher and worker for namespace `ns` on the sandbox, with a queue prefix of their own. */
export function controllerEnv(ns: string, extra: Record<string, string> = {}): Record<string, string> {
  const { kubeconfig, redisUrl } = sandbox();
  return {
    KUBECONFIG: kubeconfig,
    EBB_REDIS_URL: redisUrl,
    EBB_NAMESPACES: ns,
    EBB_QUEUE_PREFIX: `{ebb-${randomBytes(4).toString('hex')}}`,
    EBB_HTTP_PORT: '0',
    EBB_SCALER_PORT: '0',
    EBB_HTTP_ADDRESS: '127.0.0.1',
    EBB_BOARD: 'false',
    EBB_LOG_LEVEL: 'warn',
    // Check servers of the tests listen on loopback, which an install refuses.
    EBB_CHECK_NETWORKS: 'local',
    EBB_CHECK_ALLOWED_HOSTS: '*/127.0.0.1',
    ...extra,
  };
}

/** Starts a watcher and a worker for a fresh namespace before the file's tests; stops them after. */
export function useController(prefix: string, opts: ControllerOptions = {}): { readonly ns: string; readonly env: Record<string, string> } {
  let watcher: RunningWatcher | undefined;
  let worker: RunningWorker | undefined;
  const state = { ns: '', env: {} as Record<string, string> };
  beforeAll(async () => {
    state.ns = await freshNamespace(prefix);
    const env = controllerEnv(state.ns, opts.env);
    state.env = env;
    const log = opts.log ?? createLogger('it-app', 'warn');
    watcher = await startWatcher(parseWatcherConfig(env), log);
    worker = await startWorker(parseWorkerConfig(env), log, reconcilers());
  });
  afterAll(async () => {
    await worker?.stop();
    await watcher?.stop();
  });
  return state;
}

export const uniqueName = (prefix: string): string => `${prefix}-${randomBytes(3).toString('hex')}`;

export function image(tag: string): string {
  return `registry.example.com/team/web:${tag}`;
}

export function template(name: string, tag: string): AppSpec['template'] {
  return { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: image(tag) }], terminationGracePeriodSeconds: 1 } };
}

export async function createApp(ns: string, name: string, spec: Partial<AppSpec> = {}): Promise<App> {
  const body = {
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: { name, namespace: ns },
    spec: { replicas: 3, selector: { matchLabels: { app: name } }, serviceName: name, template: template(name, 'v1'), ...spec },
  };
  return sandbox().rest.create<App>(appRef(ns), body);
}

export async function patchApp(ns: string, name: string, specPatch: unknown): Promise<App> {
  return sandbox().rest.patch<App>(appRef(ns, name), { spec: specPatch }, PatchType.merge);
}

export async function getApp(ns: string, name: string): Promise<App> {
  return sandbox().rest.get<App>(appRef(ns, name));
}

/** The App's pods (by the App label), sorted by ordinal. */
export async function podsOf(ns: string, name: string): Promise<Pod[]> {
  const list = await sandbox().rest.list<Pod>(core('pods', ns), { labelSelector: `${Label.app}=${name}` });
  return list.items.sort((a, b) => getOrdinal(name, a.metadata.name) - getOrdinal(name, b.metadata.name));
}

export async function revisionsOf(ns: string, name: string): Promise<ControllerRevision[]> {
  const list = await sandbox().rest.list<ControllerRevision>(
    { group: 'apps', version: 'v1', resource: 'controllerrevisions', namespace: ns },
    { labelSelector: `${Label.app}=${name}` },
  );
  return list.items.sort((a, b) => a.revision - b.revision);
}

export async function claimsIn(ns: string): Promise<PersistentVolumeClaim[]> {
  return (await sandbox().rest.list<PersistentVolumeClaim>(core('persistentvolumeclaims', ns))).items;
}

export interface Snapshot {
  app: App;
  pods: Pod[];
}

export async function snapshot(ns: string, name: string): Promise<Snapshot> {
  const [app, pods] = await Promise.all([getApp(ns, name), podsOf(ns, name)]);
  return { app, pods };
}

/**
 * All `replicas` pods Running and Ready at the update revision (or `revision`), none terminating, and status
 * agrees (observedGeneration included).
 */
export function isSettled(s: Snapshot, revision?: string): boolean {
  const st = s.app.status;
  const want = s.app.spec.replicas ?? 1;
  if (!st) return false;
  const rev = revision ?? st.updateRevision;
  return (
    st.observedGeneration === s.app.metadata.generation &&
    s.pods.length === want &&
    s.pods.every((p) => !p.metadata.deletionTimestamp && isRunningAndReady(p) && getPodRevision(p) === rev) &&
    st.replicas === want &&
    st.readyReplicas === want &&
    st.availableReplicas === want &&
    st.updatedReplicas === want &&
    st.currentRevision === rev &&
    st.updateRevision === rev
  );
}

/** Polls snapshots until `check` holds; `onEach` sees every snapshot (for invariants). */
export async function until(
  ns: string,
  name: string,
  check: (s: Snapshot) => boolean,
  opts: { timeoutMs?: number; what?: string; onEach?: (s: Snapshot) => void } = {},
): Promise<Snapshot> {
  let last: Snapshot | undefined;
  try {
    return await waitFor(
      async () => {
        const s = await snapshot(ns, name);
        last = s;
        opts.onEach?.(s);
        return check(s) ? s : undefined;
      },
      { timeoutMs: opts.timeoutMs ?? 120_000, intervalMs: 100, what: opts.what ?? `App ${ns}/${name}` },
    );
  } catch (err) {
    const pods = last?.pods.map(
      (p) =>
        `${p.metadata.name ?? ''}@${getPodRevision(p) ?? ''}:${p.status?.phase ?? ''}${isRunningAndReady(p) ? '+R' : ''}${p.metadata.deletionTimestamp ? '(T)' : ''}`,
    );
    throw new Error(`${errorMessage(err)}; pods ${JSON.stringify(pods)}; status ${JSON.stringify(last?.app.status)}`);
  }
}

export const settled = (ns: string, name: string, revision?: string, timeoutMs?: number): Promise<Snapshot> =>
  until(ns, name, (s) => isSettled(s, revision), { what: `App ${ns}/${name} settled`, ...(timeoutMs ? { timeoutMs } : {}) });

/** Replicas in range that are missing, terminating or not ready. */
export function unavailable(s: Snapshot): number {
  const want = s.app.spec.replicas ?? 1;
  const start = s.app.spec.ordinals?.start ?? 0;
  let n = 0;
  for (let o = start; o < start + want; o++) {
    const pod = s.pods.find((p) => getOrdinal(s.app.metadata.name ?? '', p.metadata.name) === o);
    if (!pod || pod.metadata.deletionTimestamp || !isRunningAndReady(pod)) n++;
  }
  return n;
}

export const revisionOf = getPodRevision;

/** An events.k8s.io Event as ebb writes it. */
export type EventObject = Event & Required<Pick<Event, 'reason' | 'action' | 'note' | 'regarding'>>;

/** The Events ebb recorded on App `app` with `reason`. */
export async function eventsOf(ns: string, app: string, reason: string): Promise<EventObject[]> {
  const list = await sandbox().rest.list<EventObject>({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns });
  return list.items.filter((e) => e.regarding.name === app && e.reason === reason);
}
