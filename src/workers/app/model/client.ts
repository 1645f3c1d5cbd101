/**
 * The narrow interfaces the App reconcile acts through. `rest-client.ts` implements them on the apiserver;
 * `harness/fakes/cluster.ts` in memory (counting calls, failing the Nth call on demand) for unit and scenario tests.
 * Every write method throws KubeError with the apiserver's code (NotFound, Conflict, AlreadyExists,
 * Invalid, ...); merge patches that carry `metadata.resourceVersion` are optimistic-concurrency writes.
 */
import type { App } from '../../../api/app.ts';
import type { ImageList } from '../../../api/image-list.ts';
import type { PatchClient } from '../../inplace/index.ts';
import type { EventSpec } from './actions.ts';
import type { AnalysisIO, CheckTemplateStore, MeasureDesk } from './analysis-io.ts';
import type { ClusterStored, ControllerRevision, KubeObject, PersistentVolumeClaim, Pod, Stored } from '../../../kube/types.ts';

interface AppStore {
  get(namespace: string, name: string): Promise<Stored<App> | undefined>;
  /** JSON merge patch of the App itself (spec), field manager ebb. */
  patch(namespace: string, name: string, patch: unknown): Promise<Stored<App>>;
  /** JSON merge patch of the status subresource, field manager ebb. */
  patchStatus(namespace: string, name: string, patch: unknown): Promise<Stored<App>>;
}

/** Every object it returns was read from (or written to) the apiserver: `Stored`, with name, uid and resourceVersion. */
export interface ObjectStore<T extends KubeObject> {
  list(namespace: string, labelSelector: string): Promise<Stored<T>[]>;
  create(namespace: string, obj: T): Promise<Stored<T>>;
  /** JSON merge patch, field manager ebb. */
  patch(namespace: string, name: string, patch: unknown): Promise<Stored<T>>;
}

export interface PodStore extends ObjectStore<Pod> {
  get(namespace: string, name: string): Promise<Stored<Pod> | undefined>;
  /** Deletes with a UID precondition (a pod recreated under the same name is never deleted by mistake). */
  delete(namespace: string, name: string, uid: string | undefined): Promise<void>;
}

type ClaimStore = ObjectStore<PersistentVolumeClaim>;

export interface RevisionStore extends ObjectStore<ControllerRevision> {
  get(namespace: string, name: string): Promise<Stored<ControllerRevision> | undefined>;
  delete(namespace: string, name: string, uid: string | undefined): Promise<void>;
}

export interface EventRecorder {
  record(app: Stored<App>, event: EventSpec, now: Date): Promise<void>;
}

/** The cluster-scoped ImageLists (one per node, named after it), as far as pre-warming uses them. */
export interface ImageListStore {
  list(labelSelector: string): Promise<ClusterStored<ImageList>[]>;
  /**
   * Server-side apply of `body` (an ImageList, named `name`) with `fieldManager`, never forced: fields other
   * managers own stay, and an entry another manager lists too is shared rather than taken over.
   */
  apply(name: string, body: unknown, fieldManager: string): Promise<void>;
}

/** Nodes, read only (pre-warming's warm pool and scale-up targets). */
export interface NodeStore {
  /** Every Node `labelSelector` selects ('' for all), page by page. */
  list(labelSelector: string): Promise<NodeObject[]>;
}

/** What pre-warming reads of a Node. */
export interface NodeObject {
  metadata: { name?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}

/**
 * Creates with `dryRun=All`: the apiserver validates and admits the object (every admission plugin, policy and
 * webhook) and stores nothing. Objects are sent with `generateName` and no name, so a dry run never collides
 * with a live object. Throws KubeError as a real create would.
 */
export interface DryRunCreator {
  pod(namespace: string, pod: Pod): Promise<void>;
  claim(namespace: string, claim: PersistentVolumeClaim): Promise<void>;
}

export interface AppClient {
  apps: AppStore;
  pods: PodStore;
  /**
   * Pod writes of the in-place update (pods/status, the spec JSON patch, pods/resize), through the in-place
   * executor (`applyInPlaceStep`, `markGateReady`), which builds the requests itself.
   */
  podPatches: PatchClient;
  claims: ClaimStore;
  revisions: RevisionStore;
  events: EventRecorder;
  imageLists: ImageListStore;
  nodes: NodeStore;
  dryRun: DryRunCreator;
  /** The check templates an App's analysis checks name (`templateRef`); absent: not read, such checks are unresolved. */
  checkTemplates?: CheckTemplateStore | undefined;
  /** What web and Prometheus checks measure through: a Secret reader (App namespace only) and the worker's check HTTP. Absent: those checks are inconclusive. */
  analysis?: AnalysisIO | undefined;
  /** Where due web and Prometheus measurements are handed to the measure queue instead of taken in the reconcile; absent: taken in it. */
  measureDesk?: MeasureDesk | undefined;
}
