/** What the ImagePullJob reconcile reads and writes, as a narrow interface, and its implementation on KubeRest. */
import { randomBytes } from 'node:crypto';
import { API_VERSION, GROUP, IMAGE_LIST_KIND, IMAGE_PULL_JOB_KIND, imageListRef, imagePullJobRef } from '../../api/group.ts';
import type { ImageList } from '../../api/image-list.ts';
import type { ImagePullJob, ImagePullJobStatus } from '../../api/image-pull-job.ts';
import { FieldManager } from '../../api/keys.ts';
import { isKubeError } from '../../kube/errors.ts';
import { core } from '../../kube/paths.ts';
import type { KubeRest } from '../../kube/rest.ts';
import type { Taint } from '../../kube/tolerations.ts';
import type { ClusterStored, ObjectMeta, Stored } from '../../kube/types.ts';
import { microTime, reportingInstance } from '../shared/event-fields.ts';
import { listAll } from '../../kube/reads.ts';
import type { NodeInfo, PullJobAction } from './plan.ts';
import type { PullJobEvent } from './report.ts';

export interface PullJobClient {
  get(namespace: string, name: string): Promise<Stored<ImagePullJob> | undefined>;
  /** Nodes carrying every `selector` label, not being deleted, with their taints. */
  nodes(selector: Readonly<Record<string, string>> | undefined): Promise<NodeInfo[]>;
  /** ImageLists carrying the label key `labelKey`. */
  lists(labelKey: string): Promise<ClusterStored<ImageList>[]>;
  /** One request or clear, server-side applied with `fieldManager` (never forced). */
  apply(action: PullJobAction, fieldManager: string): Promise<void>;
  writeStatus(job: Stored<ImagePullJob>, status: ImagePullJobStatus): Promise<void>;
  deleteJob(job: Stored<ImagePullJob>): Promise<void>;
  record(job: Stored<ImagePullJob>, event: PullJobEvent, now: Date): Promise<void>;
}

/** The apply body: the job's entries and label (request), or nothing but the uid precondition (clear). */
export function pullJobApplyBody(action: PullJobAction): Record<string, unknown> {
  const head = { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND };
  if (action.kind === 'clear') return { ...head, metadata: { name: action.node, uid: action.uid } };
  const secret = action.pullSecret ? { pullSecret: action.pullSecret } : {};
  return {
    ...head,
    metadata: { name: action.node, labels: { [action.label.key]: action.label.value } },
    spec: { images: action.images.map((image) => ({ image, ...secret })) },
  };
}

const ignore =
  (...codes: Parameters<typeof isKubeError>[1][]) =>
  (err: unknown): void => {
    if (!codes.some((c) => isKubeError(err, c))) throw err;
  };

const NOTE_MAX = 1024;
const EVENT_WRITE_TIMEOUT_MS = 10_000;

function eventBody(job: Stored<ImagePullJob>, event: PullJobEvent, now: Date): Record<string, unknown> {
  const { name, namespace, uid, resourceVersion } = job.metadata;
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${name.slice(0, 200)}.${now.getTime().toString(16)}${randomBytes(4).toString('hex')}`, namespace },
    eventTime: microTime(now),
    reportingController: `${GROUP}/ebb`,
    reportingInstance: reportingInstance(),
    action: event.reason,
    reason: event.reason,
    type: event.type,
    note: event.message.slice(0, NOTE_MAX),
    regarding: { apiVersion: API_VERSION, kind: IMAGE_PULL_JOB_KIND, name, namespace, uid, resourceVersion },
  };
}

/**
 * The client on the apiserver. `pullSecrets`: whether ImageList entries may name pull secrets (the worker
 * copies them for the daemons); without, entries carry none, as for Apps.
 */
export function restPullJobClient(rest: KubeRest, signal: AbortSignal, pullSecrets: boolean): PullJobClient {
  return {
    get: (ns, name) =>
      rest.get<Stored<ImagePullJob>>(imagePullJobRef(ns, name), signal).catch((err: unknown) => {
        if (isKubeError(err, 'NotFound')) return undefined;
        throw err;
      }),
    nodes: async (selector) => {
      const labelSelector = Object.entries(selector ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      // Whole Nodes (their taints are in the spec), in pages.
      const nodes = await listAll<{ metadata: ObjectMeta; spec?: { taints?: Taint[] } }>(rest, core('nodes'), labelSelector || undefined, signal);
      return nodes
        .filter((n) => !n.metadata.deletionTimestamp)
        .map((n) => ({ name: n.metadata.name ?? '', labels: n.metadata.labels ?? {}, taints: n.spec?.taints ?? [] }));
    },
    lists: (labelKey) => listAll<ClusterStored<ImageList>>(rest, imageListRef(), labelKey, signal),
    apply: async (action, fieldManager) => {
      const a = action.kind === 'request' && !pullSecrets ? { ...action, pullSecret: undefined } : action;
      // A clear that meets no ImageList with that uid: the ImageList is gone, and the entries with it.
      await rest
        .apply(imageListRef(action.node), pullJobApplyBody(a), fieldManager, false, signal)
        .catch(action.kind === 'clear' ? ignore('Conflict', 'NotFound') : ignore());
    },
    writeStatus: async (job, status) => {
      const body = { apiVersion: API_VERSION, kind: IMAGE_PULL_JOB_KIND, metadata: { name: job.metadata.name, namespace: job.metadata.namespace }, status };
      await rest.apply(imagePullJobRef(job.metadata.namespace, job.metadata.name, 'status'), body, FieldManager.ebb, true, signal);
    },
    deleteJob: async (job) => {
      await rest
        .delete(imagePullJobRef(job.metadata.namespace, job.metadata.name), { uid: job.metadata.uid, propagationPolicy: 'Background' }, signal)
        .catch(ignore('NotFound', 'Conflict'));
    },
    record: async (job, event, now) => {
      // Best effort: an Event that cannot be written is not worth a retry of the reconcile.
      await rest
        .create(
          { group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: job.metadata.namespace },
          eventBody(job, event, now),
          {},
          AbortSignal.timeout(EVENT_WRITE_TIMEOUT_MS),
        )
        .catch(() => undefined);
    },
  };
}
