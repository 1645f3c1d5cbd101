/**
 * The soak's Apps: small (1–3 replicas), spread over a few namespaces, each with a local model of its last
 * spec; random edits of that model (image → rollout, pod update policy, template labels/annotations, App
 * metadata, scale, pause/resume) patched onto the App; and the convergence check against that model.
 */
import type { App } from '../../src/api/app.ts';
import { API_VERSION, APP_KIND, appRef } from '../../src/api/group.ts';
import { core } from '../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../src/kube/rest.ts';
import type { Pod } from '../../src/kube/types.ts';
import { getPodRevision, isRunningAndReady } from '../../src/workers/app/pods/predicates.ts';

export const APP_LABEL = 'soak.ebb.dev/app';

export type UpdatePolicy = 'ReCreate' | 'InPlaceIfPossible';
export type EditKind = 'image' | 'image+policy' | 'template-meta' | 'app-meta' | 'scale' | 'pause' | 'resume';

export interface SoakApp {
  namespace: string;
  name: string;
  parallel: boolean;
  claim: boolean;
  replicas: number;
  tag: number;
  policy: UpdatePolicy;
  maxUnavailable: number;
  paused: boolean;
  templateEdit: number;
  metaEdit: number;
}

/** The seeded PRNG, so a run's Apps and edits can be replayed with `--seed`. */
export { seededRandom as rng } from '../../harness/seeded-random.ts';

export const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

export function planApps(count: number, namespaces: string[], r: () => number): SoakApp[] {
  return Array.from({ length: count }, (_, i) => ({
    namespace: namespaces[i % namespaces.length]!,
    name: `soak-${String(i).padStart(3, '0')}`,
    parallel: r() < 0.5,
    claim: r() < 0.25,
    replicas: 1 + Math.floor(r() * 3),
    tag: 1,
    policy: r() < 0.5 ? 'ReCreate' : 'InPlaceIfPossible',
    maxUnavailable: r() < 0.7 ? 1 : 2,
    paused: false,
    templateEdit: 0,
    metaEdit: 0,
  }));
}

export const imageOf = (a: SoakApp): string => `registry.example.com/soak/web:v${a.tag}`;

function template(a: SoakApp): Record<string, unknown> {
  return {
    metadata: { labels: { [APP_LABEL]: a.name, 'soak.ebb.dev/edit': String(a.templateEdit) }, annotations: { 'soak.ebb.dev/edit': String(a.templateEdit) } },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: imageOf(a),
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
          ...(a.claim ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}),
        },
      ],
    },
  };
}

function mutableSpec(a: SoakApp): Record<string, unknown> {
  return {
    replicas: a.replicas,
    template: template(a),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: a.maxUnavailable, paused: a.paused, podUpdatePolicy: a.policy } },
  };
}

export function appManifest(a: SoakApp): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: { name: a.name, namespace: a.namespace },
    spec: {
      selector: { matchLabels: { [APP_LABEL]: a.name } },
      serviceName: a.name,
      podManagementPolicy: a.parallel ? 'Parallel' : 'OrderedReady',
      ...(a.claim
        ? { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] }
        : {}),
      ...mutableSpec(a),
    },
  };
}

/** Changes the model at random and returns what changed; the caller patches the App with `patchFor`. */
export function randomEdit(a: SoakApp, r: () => number): EditKind {
  if (a.paused && r() < 0.5) {
    a.paused = false;
    return 'resume';
  }
  const x = r();
  if (x < 0.4) {
    a.tag++;
    return 'image';
  }
  if (x < 0.5) {
    a.tag++;
    a.policy = a.policy === 'ReCreate' ? 'InPlaceIfPossible' : 'ReCreate';
    return 'image+policy';
  }
  if (x < 0.65) {
    a.templateEdit++;
    return 'template-meta';
  }
  if (x < 0.75) {
    a.metaEdit++;
    return 'app-meta';
  }
  if (x < 0.9) {
    a.replicas = 1 + ((a.replicas + Math.floor(r() * 2)) % 3);
    return 'scale';
  }
  if (a.paused) {
    a.paused = false;
    return 'resume';
  }
  a.paused = true;
  return 'pause';
}

export function patchFor(a: SoakApp, kind: EditKind): Record<string, unknown> {
  if (kind === 'app-meta') {
    return { metadata: { labels: { 'soak.ebb.dev/meta': String(a.metaEdit) }, annotations: { 'soak.ebb.dev/meta': `edit ${a.metaEdit}` } } };
  }
  return { spec: mutableSpec(a) };
}

export async function applyEdit(rest: KubeRest, a: SoakApp, kind: EditKind, signal?: AbortSignal): Promise<void> {
  await rest.patch(appRef(a.namespace, a.name), patchFor(a, kind), PatchType.merge, {}, signal);
}

function statusProblems(a: SoakApp, app: App): string[] {
  const why: string[] = [];
  const s = app.status ?? {};
  const gen = app.metadata.generation;
  if (s.observedGeneration !== gen) why.push(`observedGeneration ${s.observedGeneration ?? '-'} of ${gen ?? '-'}`);
  if (app.spec.replicas !== a.replicas || app.spec.template.spec?.containers[0]?.image !== imageOf(a)) why.push('spec differs from the last edit');
  const counts = [s.replicas, s.readyReplicas, s.updatedReplicas];
  if (counts.some((n) => n !== a.replicas)) why.push(`status replicas/ready/updated ${counts.map((n) => n ?? '-').join('/')} of ${a.replicas}`);
  if (!s.updateRevision || s.currentRevision !== s.updateRevision)
    why.push(`currentRevision ${s.currentRevision ?? '-'} != updateRevision ${s.updateRevision ?? '-'}`);
  return why;
}

function podProblems(a: SoakApp, updateRevision: string | undefined, pods: Pod[]): string[] {
  const why: string[] = [];
  const live = pods.filter((p) => p.metadata.deletionTimestamp === undefined);
  if (live.length !== a.replicas || live.length !== pods.length)
    why.push(`${live.length} live pods (${pods.length - live.length} terminating), want ${a.replicas}`);
  const stale = live.filter((p) => getPodRevision(p) !== updateRevision || p.spec?.containers[0]?.image !== imageOf(a) || !isRunningAndReady(p));
  if (stale.length > 0) why.push(`pods not updated and ready: ${stale.map((p) => p.metadata.name).join(',')}`);
  return why;
}

/** Why an App is not at its model's spec yet (empty: converged). */
export function notConverged(a: SoakApp, app: App | undefined, pods: Pod[]): string[] {
  if (!app) return ['App missing'];
  return [...statusProblems(a, app), ...podProblems(a, app.status?.updateRevision, pods)];
}

/** Every App's reasons for not being converged (only the Apps that are not). */
export async function convergence(rest: KubeRest, apps: SoakApp[], signal?: AbortSignal): Promise<Map<string, string[]>> {
  const namespaces = [...new Set(apps.map((a) => a.namespace))];
  const live = new Map<string, App>();
  const podsOf = new Map<string, Pod[]>();
  for (const ns of namespaces) {
    for (const app of (await rest.list<App>(appRef(ns), {}, signal)).items) live.set(`${ns}/${app.metadata.name}`, app);
    for (const pod of (await rest.list<Pod>(core('pods', ns), {}, signal)).items) {
      const key = `${ns}/${pod.metadata.labels?.[APP_LABEL] ?? ''}`;
      podsOf.set(key, [...(podsOf.get(key) ?? []), pod]);
    }
  }
  const out = new Map<string, string[]>();
  for (const a of apps) {
    const key = `${a.namespace}/${a.name}`;
    const why = notConverged(a, live.get(key), podsOf.get(key) ?? []);
    if (why.length > 0) out.set(key, why);
  }
  return out;
}

/** Pods per node (the spread of the Apps over the simulated nodes). */
export async function podsPerNode(rest: KubeRest, namespaces: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const ns of namespaces) {
    for (const p of (await rest.list<Pod>(core('pods', ns))).items) {
      const node = p.spec?.nodeName ?? '(unscheduled)';
      out[node] = (out[node] ?? 0) + 1;
    }
  }
  return out;
}
