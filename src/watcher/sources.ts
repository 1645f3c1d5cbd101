import { appRef, imageListRef } from '../api/group.ts';
import { Label } from '../api/keys.ts';
import type { OversizedObject } from '../kube/paged-list.ts';
import { core, type ResourceRef } from '../kube/paths.ts';
import { formatKey, type ObjectKey } from '../queue/names.ts';
import type { AppStates } from './app-conditions.ts';
import { appKey, entryOwnerKeys, imageListKey, podOwnerKey } from './keys.ts';
import { nodeSource } from './node-source.ts';
import { pullJobSource } from './pull-job-sources.ts';
import { podDigest } from './pod-digest.ts';
import type { PodHolds } from './pod-holds.ts';
import { appSettled } from './settled.ts';
import type { KubeObject } from '../kube/types.ts';
import { observers, WarmPools, type AppObserver } from './warm-pools.ts';

export { runSource } from './run-source.ts';

export type SourceState = 'starting' | 'listing' | 'watching' | 'backoff';

/** Where events go: the watcher's enqueue (idempotent) and its set of known object keys for resync. */
export interface Sink {
  enqueue(keys: ObjectKey[], cause: 'list' | 'event'): Promise<void>;
  known: KnownKeys;
  /** Pod events held briefly (`pod-holds.ts`); a held event whose hold ends enqueues through `enqueue`. */
  holds: PodHolds;
  onWatchEvent(resource: string, type: string): void;
  /** A watch event that needs no reconcile (e.g. a status-only update of an App). */
  onIgnored(resource: string, reason: string): void;
  onRestart(resource: string): void;
  /** An object left out for its size (`ebb_objects_too_large_total`, a rate-limited Event on it). */
  onTooLarge(ref: ResourceRef, object: OversizedObject): void;
}

/** The bit above a 32-bit fingerprint that marks an object not settled (`appSettled`); 2^33 is still exact. */
const UNSETTLED = 2 ** 32;

/** One number per known key: the metadata fingerprint, plus UNSETTLED when the object was not settled. */
export function knownValue(fingerprint: number, settled: boolean): number {
  return (fingerprint >>> 0) + (settled ? 0 : UNSETTLED);
}

/**
 * The keys of Apps and ImageLists that exist, per source, each with the fingerprint of its metadata
 * (`metaFingerprint`) and whether it was settled when last seen, packed in one number (`knownValue`): the
 * key's `formatKey` form → a number, no objects.
 */
export class KnownKeys {
  private readonly bySource = new Map<string, Map<string, number>>();

  /** What a complete list found (values from `knownValue`); the map is taken over, not copied. */
  replace(source: string, entries: Map<string, number>): void {
    this.bySource.set(source, entries);
  }

  /**
   * Records `key` with `fingerprint` and its settled bit; false when it was known with that same fingerprint
   * already (a change of the settled bit alone is a status change: recorded, not reported).
   */
  record(source: string, key: ObjectKey, fingerprint: number, settled = true): boolean {
    let map = this.bySource.get(source);
    if (!map) this.bySource.set(source, (map = new Map<string, number>()));
    const k = formatKey(key);
    const value = knownValue(fingerprint, settled);
    const before = map.get(k);
    map.set(k, value);
    return before === undefined || before % UNSETTLED !== value % UNSETTLED;
  }

  delete(source: string, key: ObjectKey): void {
    this.bySource.get(source)?.delete(formatKey(key));
  }

  /** Whether `source` has listed (or seen events) and does not hold `key`: the object is gone or never was. */
  lacks(source: string, key: ObjectKey): boolean {
    const map = this.bySource.get(source);
    return map !== undefined && !map.has(formatKey(key));
  }

  all(): string[] {
    return [...this.bySource.values()].flatMap((m) => [...m.keys()]);
  }

  /** The keys last seen not settled, of the sources `source` accepts. */
  unsettledWhere(source: (name: string) => boolean): string[] {
    const keys: string[] = [];
    for (const [name, m] of this.bySource) if (source(name)) for (const [k, v] of m) if (v >= UNSETTLED) keys.push(k);
    return keys;
  }

  /** The keys last seen not settled. */
  unsettled(): string[] {
    const keys: string[] = [];
    for (const m of this.bySource.values()) for (const [k, v] of m) if (v >= UNSETTLED) keys.push(k);
    return keys;
  }

  get size(): number {
    let n = 0;
    for (const m of this.bySource.values()) n += m.size;
    return n;
  }
}

export interface SourceSpec {
  /** Unique name, e.g. `apps/ns1`, `pods`, `imagelists`. */
  name: string;
  ref: ResourceRef;
  labelSelector?: string;
  /** Maps an object to the key it concerns. */
  keyOf: (obj: KubeObject) => ObjectKey | undefined;
  /**
   * Other objects an object's events concern (enqueued too, never tracked): ImageList → pre-warming Apps and
   * pull jobs; Node → Apps with a warm pool and open pull jobs. `type` is the watch event's, undefined for an
   * object of a list. A source whose objects have no key of their own (Nodes) enqueues only these.
   */
  relatedKeys?: (obj: KubeObject, type?: string) => ObjectKey[];
  /** Whether the objects themselves are tracked for resync (Apps, ImageLists) or only mapped (Pods). */
  tracked: boolean;
  /**
   * Tracked sources only: a MODIFIED event that leaves the metadata fingerprint unchanged (a status-only
   * update) is not enqueued. Apps: their status is ebb's own output, and a resync still covers the rest.
   */
  ignoreStatusOnly?: boolean;
  /**
   * Tracked sources only: whether an object is settled (nothing left to do), from its full object. A source
   * with it is listed and watched in full instead of metadata only; one without counts as always settled.
   */
  settledOf?: (obj: KubeObject) => boolean;
  /**
   * Untracked sources only: a number per object of what plans read of it (`podDigest`). A source with it is
   * listed and watched in full, keeps the number per object, and enqueues an event only when
   * `podEventNeedsReconcile` says so.
   */
  digestOf?: (obj: KubeObject) => number;
  /**
   * Untracked sources only: the tracked source that holds the objects' owners (pods → their namespace's Apps).
   * An event whose owner that source has listed and does not hold is dropped: a gone App was enqueued by its
   * own DELETED event (the reconcile that clears its pre-warm entries), and every pod of it deleted after
   * would only repeat that reconcile. A relist of the owners' source enqueues every owner anyway.
   */
  ownerSource?: string;
  /**
   * Tracked sources only: every event of an object (its status written included) releases the pod events held
   * until its status is written (`PodHolds.appEvent`). Apps.
   */
  releasesPodHolds?: boolean;
  /** Apps: what is counted and indexed from every App object seen (`ebb_apps_in_state`, the warm pools). */
  states?: AppObserver;
}

/** The watch sources for a namespace set (empty = all namespaces); `known` lets Node events reach the open pull jobs. */
export function sourceSpecs(namespaces: readonly string[], appStates?: AppStates, known?: KnownKeys, pools = new WarmPools()): SourceSpec[] {
  const scopes: (string | undefined)[] = namespaces.length > 0 ? [...namespaces] : [undefined];
  const specs: SourceSpec[] = [];
  const states = observers(appStates, pools);
  for (const ns of scopes) {
    const suffix = ns ? `/${ns}` : '';
    specs.push({
      name: `apps${suffix}`,
      ref: appRef(ns),
      keyOf: appKey,
      tracked: true,
      ignoreStatusOnly: true,
      settledOf: appSettled,
      releasesPodHolds: true,
      states,
    });
    specs.push({
      name: `pods${suffix}`,
      ref: core('pods', ns),
      labelSelector: Label.app,
      keyOf: podOwnerKey,
      tracked: false,
      digestOf: podDigest,
      ownerSource: `apps${suffix}`,
    });
    specs.push(pullJobSource(ns));
  }
  specs.push({ name: 'imagelists', ref: imageListRef(), keyOf: imageListKey, tracked: true, relatedKeys: (o) => entryOwnerKeys(o, namespaces) });
  specs.push(nodeSource(pools, known));
  return specs;
}
