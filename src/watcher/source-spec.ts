/** What a watch source is (its resource, how an object maps to keys, what is kept of it) and where its events go. */
import type { OversizedObject } from '../kube/paged-list.ts';
import type { ResourceRef } from '../kube/paths.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ObjectKey } from '../queue/names.ts';
import type { KnownKeys } from './known-keys.ts';
import type { PodHolds } from './pod-holds.ts';
import type { AppObserver } from './warm-pools.ts';
import type { ViewFeed } from '../view/writer.ts';
import type { ViewKind } from '../view/changes.ts';

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
  /** Where the App and pod sources write the shared view (`src/view/`), before they enqueue; absent: no view. */
  view?: ViewFeed | undefined;
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
  /** The sources the shared view is written from: their objects go into it (`Sink.view`). */
  view?: ViewKind;
  /** Apps: what is counted and indexed from every App object seen (`ebb_apps_in_state`, the warm pools). */
  states?: AppObserver;
}
