/** The App reconcile's client interface (`client.ts`) on the apiserver, through KubeRest (explicit content types, field manager ebb). */
import type { App } from '../../api/app.ts';
import type { CheckTemplate } from '../../api/check-template.ts';
import { appRef, checkTemplateRef, imageListRef } from '../../api/group.ts';
import type { ImageList } from '../../api/image-list.ts';
import { FieldManager } from '../../api/keys.ts';
import { core, type ResourceRef } from '../../kube/paths.ts';
import { PatchType, type KubeRest } from '../../kube/rest.ts';
import { byteBudget, type ByteBudget } from '../../kube/bounded-body.ts';
import { listAll, orUndefined, secretValue } from '../../kube/reads.ts';
import { decodePod, decodePodList } from '../../kube/protobuf/envelope.ts';
import { eventObject } from './events/app-events.ts';
import { reportingInstance } from '../shared/event-fields.ts';
import type { ClusterStored, ControllerRevision, KubeObject, Pod, Stored } from '../../kube/types.ts';
import type { AppClient, EventRecorder, NodeObject, ObjectStore, RevisionStore } from './model/client.ts';
import { uncorrelated, type EventWriter } from './events/recorder.ts';
import type { CheckHttp } from '../egress/outbound.ts';

const WRITE = { fieldManager: FieldManager.ebb };
const DRY_RUN = { ...WRITE, dryRun: 'All' };

const revisionsRef = (namespace: string, name?: string): ResourceRef => ({ group: 'apps', version: 'v1', resource: 'controllerrevisions', namespace, name });
const eventsRef = (namespace: string): ResourceRef => ({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace });

/**
 * What one reconcile may read in lists (its App's pods, revisions, claims, ImageLists, nodes) before it gives up
 * with a TooLarge KubeError: a worker runs several reconciles at once within its heap, and one tenant's App with
 * fat pods or thousands of large revisions must fail alone, not take the process (and the others) down.
 */
export const RECONCILE_READ_BUDGET_BYTES = 48 * 1024 * 1024;

/** What the apiserver returns is stored: the casts to `Stored<T>` are where that is stated. */
function objectStore<T extends KubeObject>(
  rest: KubeRest,
  signal: AbortSignal,
  ref: (ns: string, name?: string) => ResourceRef,
  budget: ByteBudget,
): ObjectStore<T> {
  return {
    list: (ns, labelSelector) => listAll<Stored<T>>(rest, ref(ns), labelSelector, signal, { budget }),
    create: (ns, obj) => rest.create<Stored<T>>(ref(ns), obj, WRITE, signal),
    patch: (ns, name, patch) => rest.patch<Stored<T>>(ref(ns, name), patch, PatchType.merge, WRITE, signal),
  };
}

function deleteWithUid(rest: KubeRest, signal: AbortSignal, ref: ResourceRef, uid: string | undefined): Promise<void> {
  return rest.delete(ref, { uid }, signal).then(() => undefined);
}

/** An Event write never outlives this, whatever job asked for it (series are also written between jobs). */
const EVENT_WRITE_TIMEOUT_MS = 10_000;

/** Events through KubeRest, each write bounded on its own (not by the job that recorded it). */
export function restEventWriter(rest: KubeRest, instance = reportingInstance()): EventWriter {
  return {
    create: async (app, spec, now) => {
      const body = eventObject(app, spec, now, instance);
      const made = await rest.create<Stored<KubeObject>>(eventsRef(app.metadata.namespace), body, {}, AbortSignal.timeout(EVENT_WRITE_TIMEOUT_MS));
      return made.metadata.name;
    },
    patch: async (ns, name, patch) => {
      await rest.patch({ ...eventsRef(ns), name }, patch, PatchType.merge, {}, AbortSignal.timeout(EVENT_WRITE_TIMEOUT_MS));
    },
  };
}

/**
 * One client per reconcile: its list reads share one budget (RECONCILE_READ_BUDGET_BYTES). `checks`: the HTTP of
 * web and Prometheus checks (the worker's egress rules); absent, those checks are inconclusive.
 */
export function restAppClient(
  rest: KubeRest,
  signal: AbortSignal,
  events: EventRecorder = uncorrelated(restEventWriter(rest)),
  checks?: CheckHttp,
  budget: ByteBudget = byteBudget(RECONCILE_READ_BUDGET_BYTES),
): AppClient {
  const revisions: RevisionStore = {
    ...objectStore<ControllerRevision>(rest, signal, revisionsRef, budget),
    get: (ns, name) => orUndefined(rest.get<Stored<ControllerRevision>>(revisionsRef(ns, name), signal)),
    delete: (ns, name, uid) => deleteWithUid(rest, signal, revisionsRef(ns, name), uid),
  };
  return {
    apps: {
      get: (ns, name) => orUndefined(rest.get<Stored<App>>(appRef(ns, name), signal)),
      patch: (ns, name, patch) => rest.patch<Stored<App>>(appRef(ns, name), patch, PatchType.merge, WRITE, signal),
      patchStatus: (ns, name, patch) => rest.patch<Stored<App>>(appRef(ns, name, 'status'), patch, PatchType.merge, WRITE, signal),
    },
    // Pods are read in protobuf when the client reads protobuf: only the fields ebb reads are decoded (no
    // managedFields), and every pod write is a patch of the fields it changes, never a whole pod.
    pods: {
      ...objectStore<Pod>(rest, signal, (ns, name) => core('pods', ns, name), budget),
      list: (ns, labelSelector) => listAll(rest, core('pods', ns), labelSelector, signal, { protobuf: decodePodList, budget }),
      get: (ns, name) => orUndefined(rest.get(core('pods', ns, name), signal, decodePod)),
      delete: (ns, name, uid) => deleteWithUid(rest, signal, core('pods', ns, name), uid),
    },
    podPatches: { patch: (ref, body, type, query, s) => rest.patch(ref, body, type, query, s ?? signal) },
    claims: objectStore(rest, signal, (ns, name) => core('persistentvolumeclaims', ns, name), budget),
    revisions,
    events,
    dryRun: {
      pod: async (ns, pod) => {
        await rest.create(core('pods', ns), pod, DRY_RUN, signal);
      },
      claim: async (ns, claim) => {
        await rest.create(core('persistentvolumeclaims', ns), claim, DRY_RUN, signal);
      },
    },
    analysis: checks ? { secretValue: (ns, name, key) => secretValue(rest, signal, ns, name, key), http: checks, signal } : undefined,
    checkTemplates: { get: (ns, name) => orUndefined(rest.get<CheckTemplate>(checkTemplateRef(ns, name), signal)) },
    nodes: { list: (labelSelector) => listAll<NodeObject>(rest, core('nodes'), labelSelector || undefined, signal) },
    imageLists: {
      list: (labelSelector) => listAll<ClusterStored<ImageList>>(rest, imageListRef(), labelSelector, signal, { budget }),
      apply: async (name, body, fieldManager) => {
        await rest.apply(imageListRef(name), body, fieldManager, false, signal);
      },
    },
  };
}
