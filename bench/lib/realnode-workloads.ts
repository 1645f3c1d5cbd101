/**
 * The real-node benchmarks' workloads: an ebb App (in place, recreate, in place with pre-warm) or an upstream
 * StatefulSet with the same spec — N replicas pinned to the real node by its label, OrderedReady, RollingUpdate
 * with maxUnavailable 1, the sandbox's HTTP app with an HTTP readiness probe — and what the kubelet and the
 * registry say about pulls.
 */
import { readFile } from 'node:fs/promises';
import { API_VERSION, APP_KIND, imageListRef } from '../../src/api/group.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import { core } from '../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../src/kube/rest.ts';
import { REAL_NODE_LABEL } from '../../harness/sandbox/real-node/kubelet.ts';
import { SET_LABEL, workloadRef, type Workload } from './workloads.ts';

export type RealConfig = 'inplace' | 'recreate' | 'prewarm' | 'sts';

export const CONFIG_LABEL: Record<RealConfig, string> = {
  inplace: 'ebb in place (InPlaceIfPossible)',
  recreate: 'ebb recreate (ReCreate)',
  prewarm: 'ebb in place + imagePrewarm',
  sts: 'upstream StatefulSet',
};

/** `imagePrewarm` besides `enabled`: a field left out keeps the App's default (measured lookahead, the pull budget). */
export interface Prewarm {
  lookahead?: number;
  parallelism?: number;
}

/**
 * The workload's pod: `app`, the sample app alone; `slow`, the sample app that mounts a volume (a claim from
 * the template, a PV on the real node) and takes `startSeconds` to start (a regular init container that sleeps,
 * run from `initImage`, which rollouts leave as it is).
 */
export type RealShape = { kind: 'app' } | { kind: 'slow'; initImage: string; startSeconds: number };

export const APP_SHAPE: RealShape = { kind: 'app' };

/**
 * The pod template: pinned to the real nodes and spread over them (one pod per node when replicas = nodes),
 * answering HTTP on 8080, Ready once /healthz answers.
 */
export function realPodTemplate(name: string, image: string, graceSeconds: number, shape: RealShape = APP_SHAPE): Record<string, unknown> {
  const slow = shape.kind === 'slow';
  return {
    metadata: { labels: { [SET_LABEL]: name } },
    spec: {
      nodeSelector: { [REAL_NODE_LABEL.key]: REAL_NODE_LABEL.value },
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { [SET_LABEL]: name } } },
      ],
      dnsPolicy: 'Default',
      terminationGracePeriodSeconds: graceSeconds,
      ...(slow ? { initContainers: [{ name: 'warm-up', image: shape.initImage, env: [{ name: 'SLEEP_THEN_EXIT', value: `${shape.startSeconds}s` }] }] } : {}),
      containers: [
        {
          name: 'main',
          image,
          ports: [{ name: 'http', containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 },
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
          ...(slow ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}),
        },
      ],
    },
  };
}

const CLAIMS = {
  volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
};

export function realWorkload(config: RealConfig, namespace: string, name: string, replicas: number): Workload {
  return { kind: config === 'sts' ? 'sts' : 'ebb', policy: 'OrderedReady', namespace, name, replicas };
}

/** Creates the headless Service and the App (policy from `config`) or StatefulSet. */
export async function createRealWorkload(
  rest: KubeRest,
  config: RealConfig,
  w: Workload,
  t: { image: string; graceSeconds: number; prewarm?: Prewarm; shape?: RealShape },
): Promise<void> {
  const meta = { name: w.name, namespace: w.namespace };
  await rest.create(core('services', w.namespace), {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta,
    spec: { clusterIP: 'None', selector: { [SET_LABEL]: w.name }, ports: [{ name: 'http', port: 8080 }] },
  });
  const podUpdatePolicy = config === 'recreate' ? 'ReCreate' : 'InPlaceIfPossible';
  const rollingUpdate = { partition: 0, maxUnavailable: 1, ...(config === 'sts' ? {} : { podUpdatePolicy }) };
  const spec = {
    replicas: w.replicas,
    selector: { matchLabels: { [SET_LABEL]: w.name } },
    serviceName: w.name,
    podManagementPolicy: w.policy,
    updateStrategy: { type: 'RollingUpdate', rollingUpdate },
    template: realPodTemplate(w.name, t.image, t.graceSeconds, t.shape),
    ...(t.shape?.kind === 'slow' ? CLAIMS : {}),
    ...(config === 'prewarm' && t.prewarm ? { imagePrewarm: { enabled: true, ...t.prewarm } } : {}),
  };
  const head = w.kind === 'ebb' ? { apiVersion: API_VERSION, kind: APP_KIND } : { apiVersion: 'apps/v1', kind: 'StatefulSet' };
  await rest.create({ ...workloadRef(w), name: undefined }, { ...head, metadata: meta, spec });
}

/** The template change that starts a rollout. */
export async function setRealImage(rest: KubeRest, w: Workload, image: string, graceSeconds: number, shape: RealShape = APP_SHAPE): Promise<void> {
  await rest.patch(workloadRef(w), { spec: { template: realPodTemplate(w.name, image, graceSeconds, shape) } }, PatchType.merge);
}

const ignoreNotFound = (err: unknown): void => {
  if (!isKubeError(err, 'NotFound')) throw err;
};

/** Deletes the workload, its Service and its pods (directly: no wait for the garbage collector) and the nodes' ImageLists; claims stay. */
export async function deleteRealWorkload(rest: KubeRest, w: Workload, node: string | string[]): Promise<void> {
  await rest.delete(workloadRef(w), { propagationPolicy: 'Background' }).catch(ignoreNotFound);
  await rest.delete(core('services', w.namespace, w.name)).catch(ignoreNotFound);
  await rest.request('DELETE', `/api/v1/namespaces/${w.namespace}/pods`, { query: { labelSelector: `${SET_LABEL}=${w.name}` } });
  for (const n of [node].flat()) await rest.delete(imageListRef(n)).catch(ignoreNotFound);
}

interface KubeEvent {
  metadata: { name: string };
  reason?: string;
  message?: string;
  count?: number;
}

/** The names of the namespace's events so far (to tell the rollout's events from earlier ones). */
export async function eventNames(rest: KubeRest, ns: string): Promise<Set<string>> {
  return new Set((await rest.list<KubeEvent>(core('events', ns))).items.map((e) => e.metadata.name));
}

export interface PullEvents {
  /** Kubelet `Pulling` events: a pod waited for a pull. */
  pulling: number;
  /** `Pulled` "already present on machine". */
  present: number;
  /** The kubelet's own pull times, from `Pulled` "Successfully pulled image … in <duration>". */
  pulledIn: string[];
}

/** The kubelet's pull events in `ns` that are not in `before`, for images whose reference contains `image`. */
export async function pullEvents(rest: KubeRest, ns: string, before: Set<string>, image: string): Promise<PullEvents> {
  const events = (await rest.list<KubeEvent>(core('events', ns))).items.filter((e) => !before.has(e.metadata.name) && e.message?.includes(image));
  const count = (f: (e: KubeEvent) => boolean): number => events.filter(f).reduce((n, e) => n + (e.count ?? 1), 0);
  return {
    pulling: count((e) => e.reason === 'Pulling'),
    present: count((e) => e.reason === 'Pulled' && e.message?.includes('already present') === true),
    pulledIn: events.flatMap((e) => (e.reason === 'Pulled' ? (/Successfully pulled .* in (\S+) /.exec(e.message ?? '')?.slice(1, 2) ?? []) : [])),
  };
}

/** Size of the registry's log now: requests after this offset are the window's. */
export async function logOffset(file: string): Promise<number> {
  return (await readFile(file)).length;
}

const LINE = /"(GET|HEAD) (\S+) HTTP\/[\d.]+" (\d{3}) (\d+|-)/;

/** GETs of blob `digest` answered 200/206 after `offset` in the registry's access log, and their bytes. */
export async function blobFetches(file: string, offset: number, digest: string): Promise<{ fetches: number; bytes: number }> {
  const text = (await readFile(file)).subarray(offset).toString('utf8');
  let fetches = 0;
  let bytes = 0;
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m || m[1] !== 'GET' || !m[2]?.endsWith(`/blobs/${digest}`) || (m[3] !== '200' && m[3] !== '206')) continue;
    fetches++;
    bytes += Number(m[4]) || 0;
  }
  return { fetches, bytes };
}

/** `ebb_daemon_pulls_total{result="success"}` of the daemon serving /metrics on `port`. */
export async function daemonPulls(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let pulls = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('ebb_daemon_pulls_total{') && line.includes('result="success"')) pulls += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return pulls;
}
