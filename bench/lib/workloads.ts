/**
 * The two workloads the rollout benchmark compares: an ebb App and an upstream StatefulSet with the same
 * spec (replicas, pod management policy, RollingUpdate with maxUnavailable 1 and partition 0, a headless
 * Service, one volumeClaimTemplate, the same pod template), so the only difference is the controller.
 */
import { API_VERSION, APP_KIND, appRef } from '../../src/api/group.ts';
import { waitFor } from '../../src/common/wait.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import { core, type ResourceRef } from '../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../src/kube/rest.ts';

export type ControllerKind = 'ebb' | 'sts';
export type Policy = 'OrderedReady' | 'Parallel';

export interface Workload {
  kind: ControllerKind;
  policy: Policy;
  namespace: string;
  name: string;
  replicas: number;
}

/** The label every pod (and, through the selector, every claim) of a workload carries. */
export const SET_LABEL = 'bench.ebb.dev/set';

export const selectorOf = (w: Workload): string => `${SET_LABEL}=${w.name}`;

export function benchImage(tag: string): string {
  return `registry.example.com/bench/web:${tag}`;
}

export interface TemplateOptions {
  image: string;
  /** Pod terminationGracePeriodSeconds; the realistic kubelet profile honours it in full. */
  graceSeconds: number;
  /** One volumeClaimTemplate `data` mounted at /data (the default); false: pods without claims. */
  claims?: boolean;
}

export function podTemplate(w: Workload, t: TemplateOptions): Record<string, unknown> {
  return {
    metadata: { labels: { [SET_LABEL]: w.name } },
    spec: {
      terminationGracePeriodSeconds: t.graceSeconds,
      containers: [
        {
          name: 'main',
          image: t.image,
          ports: [{ name: 'http', containerPort: 8080 }],
          // A probe makes the simulated kubelet charge its readiness delay, as a real one would.
          readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
          resources: { requests: { cpu: '100m', memory: '64Mi' } },
          ...(t.claims === false ? {} : { volumeMounts: [{ name: 'data', mountPath: '/data' }] }),
        },
      ],
    },
  };
}

function spec(w: Workload, t: TemplateOptions): Record<string, unknown> {
  return {
    replicas: w.replicas,
    selector: { matchLabels: { [SET_LABEL]: w.name } },
    serviceName: w.name,
    podManagementPolicy: w.policy,
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 1 } },
    template: podTemplate(w, t),
    ...(t.claims === false
      ? {}
      : { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] }),
  };
}

export function workloadRef(w: Workload): ResourceRef {
  return w.kind === 'ebb' ? appRef(w.namespace, w.name) : { group: 'apps', version: 'v1', resource: 'statefulsets', namespace: w.namespace, name: w.name };
}

/** Creates the headless Service and the App or StatefulSet. */
export async function createWorkload(rest: KubeRest, w: Workload, t: TemplateOptions): Promise<void> {
  await rest.create(core('services', w.namespace), {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: w.name, namespace: w.namespace },
    spec: { clusterIP: 'None', selector: { [SET_LABEL]: w.name }, ports: [{ name: 'http', port: 8080 }] },
  });
  const head = w.kind === 'ebb' ? { apiVersion: API_VERSION, kind: APP_KIND } : { apiVersion: 'apps/v1', kind: 'StatefulSet' };
  await rest.create({ ...workloadRef(w), name: undefined }, { ...head, metadata: { name: w.name, namespace: w.namespace }, spec: spec(w, t) });
}

/** The template change that starts the rollout: a new image (merge patch on the container list). */
export async function setImage(rest: KubeRest, w: Workload, t: TemplateOptions): Promise<void> {
  await rest.patch(workloadRef(w), { spec: { template: podTemplate(w, t) } }, PatchType.merge);
}

/** A no-op change for the controller: an annotation on the workload (a new resourceVersion, same generation). */
export async function touch(rest: KubeRest, w: Workload, value: string): Promise<void> {
  await rest.patch(workloadRef(w), { metadata: { annotations: { 'bench.ebb.dev/touch': value } } }, PatchType.merge);
}

export interface WorkloadObject {
  metadata: { generation?: number };
  spec: { updateStrategy?: { rollingUpdate?: { maxUnavailable?: unknown } } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
  };
}

export async function readWorkload(rest: KubeRest, w: Workload): Promise<WorkloadObject> {
  return rest.get<WorkloadObject>(workloadRef(w));
}

/** The controller's status says it is done: observed generation, every replica updated, ready and available. */
export function statusSettled(o: WorkloadObject, replicas: number): boolean {
  const s = o.status;
  return (
    s !== undefined &&
    s.observedGeneration === o.metadata.generation &&
    s.replicas === replicas &&
    s.readyReplicas === replicas &&
    s.availableReplicas === replicas &&
    s.updatedReplicas === replicas &&
    s.currentRevision !== undefined &&
    s.currentRevision === s.updateRevision
  );
}

export async function waitStatusSettled(rest: KubeRest, w: Workload, timeoutMs: number): Promise<void> {
  await waitFor(async () => (statusSettled(await readWorkload(rest, w), w.replicas) ? true : undefined), {
    timeoutMs,
    intervalMs: 250,
    what: `${w.kind} ${w.namespace}/${w.name} status settled`,
  });
}

/** Deletes the workload (background propagation: the garbage collector removes its pods) and its Service; does not wait. */
export async function deleteWorkloadObjects(rest: KubeRest, w: Workload): Promise<void> {
  const ignoreGone = (err: unknown): void => {
    if (!isKubeError(err, 'NotFound')) throw err;
  };
  await rest.delete(workloadRef(w), { propagationPolicy: 'Background' }).catch(ignoreGone);
  await rest.delete(core('services', w.namespace, w.name)).catch(ignoreGone);
}

/** Deletes the workload, its Service, its pods and its claims, and waits until pods and claims are gone. */
export async function deleteWorkload(rest: KubeRest, w: Workload, timeoutMs: number): Promise<void> {
  await deleteWorkloadObjects(rest, w);
  const selector = selectorOf(w);
  await waitFor(async () => ((await rest.list(core('pods', w.namespace), { labelSelector: selector })).items.length === 0 ? true : undefined), {
    timeoutMs,
    intervalMs: 500,
    what: `pods of ${w.name} gone`,
  });
  await rest.request('DELETE', `/api/v1/namespaces/${w.namespace}/persistentvolumeclaims`, { query: { labelSelector: selector } });
  await waitFor(
    async () => ((await rest.list(core('persistentvolumeclaims', w.namespace), { labelSelector: selector })).items.length === 0 ? true : undefined),
    { timeoutMs, intervalMs: 500, what: `claims of ${w.name} gone` },
  );
}
