/**
 * An in-memory apiserver for the App reconcile's seams: preconditions (resourceVersion on patches, UID on
 * deletes), AlreadyExists/NotFound/Conflict as KubeErrors, generation bumps on spec changes (Apps and pods),
 * graceful pod deletion (the fake kubelet in kubelet.ts finishes it) and a tiny garbage collector. Counts every
 * call the client makes and can fail the Nth; what users, kubelets and the garbage collector do is not counted.
 */
import type { App } from '../../src/api/app.ts';
import type { CheckTemplate } from '../../src/api/check-template.ts';
import type { ResourceRef } from '../../src/kube/paths.ts';
import { PatchType } from '../../src/kube/rest.ts';
import type { EventSpec } from '../../src/workers/app/model/actions.ts';
import { applyJsonPatch, applyResizePatch, applyStatusPatch } from './pod-patch.ts';
import { FakeImageLists } from './image-lists.ts';
import { alreadyExists, CallLog, conflict, mergePatch, notFound, parseSelector, stamp } from './store.ts';
import type { ControllerRevision, KubeObject, PersistentVolumeClaim, Pod, Stored } from '../../src/kube/types.ts';
import type { AppClient, NodeObject, ObjectStore } from '../../src/workers/app/model/client.ts';
import { canonicalJson } from '../../src/common/canonical-json.ts';

/** Any object this fake stores. */
type Meta = Stored<KubeObject>;

export interface RecordedEvent {
  app: string;
  event: EventSpec;
  at: Date;
}

const key = (ns: string, name: string): string => `${ns}/${name}`;

const POD_WRITES = { patchStatus: applyStatusPatch, resize: applyResizePatch, patchSpec: applyJsonPatch } as const;

/** The operation name a pod write is counted (and can be failed) under. */
function podWrite(ref: ResourceRef, type: PatchType): 'patchStatus' | 'resize' | 'patchSpec' {
  if (ref.subresource === 'status') return 'patchStatus';
  if (ref.subresource === 'resize') return 'resize';
  if (type !== PatchType.json) throw new Error(`unexpected ${type} patch of pod ${ref.name ?? ''}`);
  return 'patchSpec';
}

export class FakeCluster {
  readonly calls = new CallLog();
  readonly events: RecordedEvent[] = [];
  /** Names of pods deleted through the client, in order. */
  readonly podDeletions: string[] = [];
  readonly apps = new Map<string, Stored<App>>();
  readonly pods = new Map<string, Stored<Pod>>();
  readonly claims = new Map<string, Stored<PersistentVolumeClaim>>();
  readonly revisions = new Map<string, Stored<ControllerRevision>>();
  readonly imageLists = new FakeImageLists();
  /** Check templates by `<namespace>/<name>`, cluster ones by `/<name>` (people write them: not counted). */
  readonly checkTemplates = new Map<string, CheckTemplate>();
  /** Nodes the pre-warm planner may read (a warm pool, a scale-up). */
  nodes: NodeObject[] = [];
  /** Called before a pod is stored: scenario tests check ordering invariants here. */
  beforeCreatePod: ((pod: Pod) => void) | undefined;
  /**
   * The cluster's admission, for pod and claim creates (dry runs included): returns the error to refuse
   * `obj` with (a policy, a quota), or undefined to admit it.
   */
  admission: ((obj: Pod | PersistentVolumeClaim) => Error | undefined) | undefined;
  private seq = 0;
  private readonly now: () => Date;

  constructor(now: () => Date = () => new Date()) {
    this.now = now;
  }

  private nextRv(): string {
    return String(++this.seq);
  }

  private create<T extends KubeObject>(store: Map<string, Stored<T>>, kind: string, ns: string, obj: T): Stored<T> {
    const name = obj.metadata?.name ?? '';
    if (store.has(key(ns, name))) throw alreadyExists(`${kind} ${name}`);
    const copy = structuredClone(obj);
    const created: Stored<T> = {
      ...copy,
      metadata: stamp({ ...copy.metadata }, { namespace: ns, uid: `uid-${++this.seq}`, resourceVersion: this.nextRv(), now: this.now() }),
    };
    store.set(key(ns, name), created);
    return structuredClone(created);
  }

  private patch<T extends Meta>(
    store: Map<string, T>,
    kind: string,
    at: { ns: string; name: string },
    patch: unknown,
    apply = (o: T, p: unknown): T => mergePatch(o, p),
  ): T {
    const { ns, name } = at;
    const existing = store.get(key(ns, name));
    if (!existing) throw notFound(`${kind} ${name}`);
    const rv = (patch as { metadata?: { resourceVersion?: string } } | undefined)?.metadata?.resourceVersion;
    if (rv !== undefined && rv !== existing.metadata.resourceVersion) throw conflict(`${kind} ${name}`);
    const next = apply(existing, patch);
    next.metadata = { ...next.metadata, uid: existing.metadata.uid, resourceVersion: this.nextRv() };
    if (kind === 'Pod' && canonicalJson((next as Partial<Pod>).spec) !== canonicalJson((existing as Partial<Pod>).spec)) {
      next.metadata.generation = (existing.metadata.generation ?? 0) + 1;
    }
    store.set(key(ns, name), next);
    return structuredClone(next);
  }

  private list<T extends Meta>(store: Map<string, T>, ns: string, selector: string): T[] {
    const matches = parseSelector(selector);
    return [...store.values()].filter((o) => o.metadata.namespace === ns && matches(o.metadata.labels ?? {})).map((o) => structuredClone(o));
  }

  private objectStore<T extends KubeObject>(store: Map<string, Stored<T>>, kind: string, prefix: string): ObjectStore<T> {
    return {
      list: (ns, selector) => this.guard(`${prefix}.list`, () => this.list(store, ns, selector)),
      create: (ns, obj) => this.guard(`${prefix}.create`, () => this.create(store, kind, ns, obj)),
      patch: (ns, name, p) => this.guard(`${prefix}.patch`, () => this.patch(store, kind, { ns, name }, p)),
    };
  }

  private guard<T>(op: string, fn: () => T): Promise<T> {
    try {
      this.calls.call(op);
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private deleteChecked<T extends Meta>(store: Map<string, T>, kind: string, ns: string, name: string, uid: string | undefined): T {
    const existing = store.get(key(ns, name));
    if (!existing) throw notFound(`${kind} ${name}`);
    if (uid !== undefined && existing.metadata.uid !== uid) throw conflict(`${kind} ${name} (UID precondition)`);
    return existing;
  }

  client(): AppClient {
    return {
      apps: {
        get: (ns, name) => this.guard('apps.get', () => structuredClone(this.apps.get(key(ns, name)))),
        patch: (ns, name, p) => this.guard('apps.patch', () => this.patch(this.apps, 'App', { ns, name }, p, (o, q) => this.specPatch(o, q))),
        patchStatus: (ns, name, p) =>
          this.guard('apps.patchStatus', () =>
            this.patch(this.apps, 'App', { ns, name }, p, (o, q) => ({ ...o, status: mergePatch(o.status, (q as { status?: unknown }).status ?? {}) })),
          ),
      },
      pods: {
        ...this.objectStore(this.pods, 'Pod', 'pods'),
        create: (ns, pod) =>
          this.guard('pods.create', () => {
            this.admit(pod);
            this.beforeCreatePod?.(pod);
            return this.create(this.pods, 'Pod', ns, { ...pod, metadata: { ...pod.metadata, generation: 1 }, status: { phase: 'Pending' } });
          }),
        get: (ns, name) => this.guard('pods.get', () => structuredClone(this.pods.get(key(ns, name)))),
        delete: (ns, name, uid) => this.guard('pods.delete', () => this.deletePodGracefully(ns, name, uid)),
      },
      podPatches: {
        patch: <T>(ref: ResourceRef, body: unknown, type: PatchType) => this.guard(`pods.${podWrite(ref, type)}`, () => this.patchPod(ref, body, type) as T),
      },
      claims: {
        ...this.objectStore(this.claims, 'PersistentVolumeClaim', 'claims'),
        create: (ns, claim) => this.guard('claims.create', () => (this.admit(claim), this.create(this.claims, 'PersistentVolumeClaim', ns, claim))),
      },
      dryRun: {
        pod: (_ns, pod) => this.guard('pods.dryRun', () => this.dryRun(pod)),
        claim: (_ns, claim) => this.guard('claims.dryRun', () => this.dryRun(claim)),
      },
      revisions: {
        ...this.objectStore(this.revisions, 'ControllerRevision', 'revisions'),
        get: (ns, name) => this.guard('revisions.get', () => structuredClone(this.revisions.get(key(ns, name)))),
        delete: (ns, name, uid) =>
          this.guard('revisions.delete', () => {
            this.deleteChecked(this.revisions, 'ControllerRevision', ns, name, uid);
            this.revisions.delete(key(ns, name));
          }),
      },
      events: {
        record: (app, event, at) => this.guard('events.record', () => void this.events.push({ app: app.metadata.name, event, at })),
      },
      imageLists: this.imageLists.store((op, fn) => this.guard(op, fn)),
      checkTemplates: {
        get: (ns, name) => this.guard('checkTemplates.get', () => structuredClone(this.checkTemplates.get(key(ns ?? '', name)))),
      },
      nodes: {
        list: (selector) =>
          this.guard('nodes.list', () => this.nodes.filter((n) => parseSelector(selector)(n.metadata.labels ?? {})).map((n) => structuredClone(n))),
      },
    };
  }

  private admit(obj: Pod | PersistentVolumeClaim): void {
    const refusal = this.admission?.(obj);
    if (refusal) throw refusal;
  }

  /** A dry run: admission only. Like the seam says, the object must come with generateName and no name. */
  private dryRun(obj: Pod | PersistentVolumeClaim): void {
    if (obj.metadata?.name || !obj.metadata?.generateName) throw new Error(`a dry run must use generateName, got name ${obj.metadata?.name ?? '(none)'}`);
    this.admit(obj);
  }

  /** A pod write of the in-place update (see pod-patch.ts). */
  private patchPod(ref: ResourceRef, body: unknown, type: PatchType): Stored<Pod> {
    const write = POD_WRITES[podWrite(ref, type)];
    return this.patch(this.pods, 'Pod', { ns: ref.namespace ?? '', name: ref.name ?? '' }, body, (pod, patch) => write(pod, patch));
  }

  /** Spec (and metadata) patch of an App: status is ignored, a spec change bumps generation. */
  private specPatch(app: Stored<App>, p: unknown): Stored<App> {
    const { status: _ignored, ...rest } = (p ?? {}) as Record<string, unknown>;
    const next = mergePatch(app, rest);
    const changed = canonicalJson(next.spec) !== canonicalJson(app.spec);
    return { ...next, status: app.status, metadata: { ...next.metadata, generation: (app.metadata.generation ?? 1) + (changed ? 1 : 0) } };
  }

  private deletePodGracefully(ns: string, name: string, uid: string | undefined): void {
    const pod = this.deleteChecked(this.pods, 'Pod', ns, name, uid);
    if (pod.metadata.deletionTimestamp) return;
    this.podDeletions.push(name);
    this.pods.set(key(ns, name), { ...pod, metadata: { ...pod.metadata, deletionTimestamp: this.now().toISOString(), resourceVersion: this.nextRv() } });
  }

  // ---- what users, kubelets and the garbage collector do ----

  addApp(app: App): Stored<App> {
    const created = this.create(this.apps, 'App', app.metadata.namespace ?? '', app);
    const stored = { ...created, metadata: { ...created.metadata, generation: 1 } };
    this.apps.set(key(created.metadata.namespace, created.metadata.name), stored);
    return structuredClone(stored);
  }

  /** A user's spec edit (merge patch without precondition). */
  editApp(ns: string, name: string, specPatch: unknown): Stored<App> {
    return this.patch(this.apps, 'App', { ns, name }, { spec: specPatch }, (o, q) => this.specPatch(o, q));
  }

  /** A user's annotation edit (merge patch: null removes a key), as `kubectl annotate` or `ebb rollout abort` makes it. */
  annotateApp(ns: string, name: string, annotations: Record<string, string | null>): Stored<App> {
    return this.patch(this.apps, 'App', { ns, name }, { metadata: { annotations } }, (o, q) => this.specPatch(o, q));
  }

  app(ns: string, name: string): Stored<App> | undefined {
    return structuredClone(this.apps.get(key(ns, name)));
  }

  podsOf(ns: string): Stored<Pod>[] {
    return [...this.pods.values()].filter((p) => p.metadata.namespace === ns);
  }

  /** A pod as a test sets it up, status included; stored as the apiserver would (uid, resourceVersion, generation 1). */
  addPod(pod: Pod): Stored<Pod> {
    return this.create(this.pods, 'Pod', pod.metadata.namespace ?? '', { ...pod, metadata: { ...pod.metadata, generation: 1 } });
  }

  /** A kubelet's pods/status patch (strategic merge, UID precondition); stored only when it changes the pod. */
  kubeletPatchStatus(ns: string, name: string, patch: unknown): boolean {
    const pod = this.pods.get(key(ns, name));
    if (!pod) return false;
    const next = applyStatusPatch(pod, patch);
    if (canonicalJson(next) === canonicalJson(pod)) return false;
    this.pods.set(key(ns, name), { ...next, metadata: { ...next.metadata, resourceVersion: this.nextRv() } });
    return true;
  }

  /** The end of a graceful deletion; the garbage collector then removes claims the pod owned. */
  removePod(ns: string, name: string): void {
    const pod = this.pods.get(key(ns, name));
    if (!pod) return;
    this.pods.delete(key(ns, name));
    this.collect(ns, pod.metadata.uid);
  }

  /** Deletes an App and (background propagation) what it owns. */
  deleteApp(ns: string, name: string): void {
    const app = this.apps.get(key(ns, name));
    this.apps.delete(key(ns, name));
    this.collect(ns, app?.metadata.uid);
  }

  private exists(uid: string): boolean {
    return [this.apps, this.pods, this.claims, this.revisions].some((store) => [...store.values()].some((o: Meta) => o.metadata.uid === uid));
  }

  /**
   * Garbage collection after `ownerUid` went away: a dependent all of whose owners are gone is deleted
   * (pods gracefully); one with owners left only loses the dangling reference.
   */
  private collect(ns: string, ownerUid: string | undefined): void {
    if (!ownerUid) return;
    const stores: Map<string, Meta>[] = [this.claims, this.revisions, this.pods];
    for (const store of stores) {
      for (const [k, o] of [...store]) {
        const refs = o.metadata.ownerReferences ?? [];
        if (o.metadata.namespace !== ns || !refs.some((r) => r.uid === ownerUid)) continue;
        const left = refs.filter((r) => r.uid !== ownerUid && this.exists(r.uid));
        if (left.length > 0) store.set(k, { ...o, metadata: { ...o.metadata, ownerReferences: left } });
        else if (store === this.pods) this.deletePodGracefully(ns, o.metadata.name, undefined);
        else store.delete(k);
      }
    }
  }
}
