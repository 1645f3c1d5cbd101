import { appRef, imageListRef } from '../api/group.ts';
import { Label } from '../api/keys.ts';
import type { Logger } from '../common/log.ts';
import { core, type ResourceRef } from '../kube/paths.ts';
import type { KubeRest } from '../kube/rest.ts';
import { listWatch, type WatchEvent } from '../kube/watch.ts';
import type { ObjectKey } from '../queue/names.ts';
import { appKey, imageListKey, keyString, podOwnerKey, type ObjectMeta } from './keys.ts';

export type SourceState = 'starting' | 'listing' | 'watching' | 'backoff';

/** Where events go: the watcher's enqueue (idempotent) and its set of known object keys for resync. */
export interface Sink {
  enqueue(keys: ObjectKey[], cause: 'list' | 'event'): Promise<void>;
  known: KnownKeys;
  onWatchEvent(resource: string, type: string): void;
  onRestart(resource: string): void;
}

/** The keys of Apps and ImageLists that exist, per source (no objects: just `kind/ns/name`). */
export class KnownKeys {
  private readonly bySource = new Map<string, Set<string>>();

  replace(source: string, keys: ObjectKey[]): void {
    this.bySource.set(source, new Set(keys.map(keyString)));
  }

  add(source: string, key: ObjectKey): void {
    let set = this.bySource.get(source);
    if (!set) this.bySource.set(source, (set = new Set()));
    set.add(keyString(key));
  }

  delete(source: string, key: ObjectKey): void {
    this.bySource.get(source)?.delete(keyString(key));
  }

  all(): string[] {
    return [...this.bySource.values()].flatMap((s) => [...s]);
  }

  get size(): number {
    let n = 0;
    for (const s of this.bySource.values()) n += s.size;
    return n;
  }
}

export interface SourceSpec {
  /** Unique name, e.g. `apps/ns1`, `pods`, `imagelists`. */
  name: string;
  ref: ResourceRef;
  labelSelector?: string;
  /** Maps an object to the key it concerns. */
  keyOf: (obj: ObjectMeta) => ObjectKey | undefined;
  /** Whether the objects themselves are tracked for resync (Apps, ImageLists) or only mapped (Pods). */
  tracked: boolean;
}

/** The watch sources for a namespace set (empty = all namespaces). */
export function sourceSpecs(namespaces: readonly string[]): SourceSpec[] {
  const scopes: (string | undefined)[] = namespaces.length > 0 ? [...namespaces] : [undefined];
  const specs: SourceSpec[] = [];
  for (const ns of scopes) {
    const suffix = ns ? `/${ns}` : '';
    specs.push({ name: `apps${suffix}`, ref: appRef(ns), keyOf: appKey, tracked: true });
    specs.push({ name: `pods${suffix}`, ref: core('pods', ns), labelSelector: Label.app, keyOf: podOwnerKey, tracked: false });
  }
  specs.push({ name: 'imagelists', ref: imageListRef(), keyOf: imageListKey, tracked: true });
  return specs;
}

function uniqueKeys(objs: ObjectMeta[], keyOf: SourceSpec['keyOf']): ObjectKey[] {
  const seen = new Map<string, ObjectKey>();
  for (const o of objs) {
    const k = keyOf(o);
    if (k) seen.set(keyString(k), k);
  }
  return [...seen.values()];
}

/**
 * Runs one supervised list→watch loop and feeds its keys to the sink. After every (re)list all keys are
 * enqueued, because events may have been missed while the watch was down. Only object metadata is listed
 * and watched, page by page, so memory stays flat however many objects exist.
 */
export async function runSource(
  spec: SourceSpec,
  deps: { rest: KubeRest; sink: Sink; log: Logger; signal: AbortSignal; watchdogMs: number; setState(s: SourceState): void },
): Promise<void> {
  const { sink } = deps;
  let lists = 0;
  let listed: ObjectKey[] = [];
  let objects = 0;
  await listWatch<ObjectMeta>(
    { rest: deps.rest, ref: spec.ref, labelSelector: spec.labelSelector, signal: deps.signal, log: deps.log, watchdogMs: deps.watchdogMs, metadataOnly: true },
    {
      onState: (state) => deps.setState(state),
      onListPage: async (items, page) => {
        if (page.first) {
          if (lists++ > 0) sink.onRestart(spec.name);
          listed = [];
          objects = 0;
        }
        const keys = uniqueKeys(items, spec.keyOf);
        objects += items.length;
        if (spec.tracked) listed.push(...keys);
        await sink.enqueue(keys, 'list');
        if (!page.last) return;
        if (spec.tracked) sink.known.replace(spec.name, listed);
        deps.log.info({ objects, keys: spec.tracked ? listed.length : undefined }, 'listed');
        listed = [];
      },
      onEvent: async (ev: WatchEvent<ObjectMeta>) => {
        sink.onWatchEvent(spec.name.split('/')[0] ?? spec.name, ev.type);
        const key = spec.keyOf(ev.object);
        if (!key) return;
        if (spec.tracked) {
          if (ev.type === 'DELETED') sink.known.delete(spec.name, key);
          else sink.known.add(spec.name, key);
        }
        await sink.enqueue([key], 'event');
      },
    },
  );
}
