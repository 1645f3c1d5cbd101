/**
 * Which Apps a Node event concerns: those with a warm pool (`spec.imagePrewarm.nodeSelector`) whose selector the
 * node's labels match. The watcher keeps, from the App objects it receives anyway, the selector of each App that
 * has a pool (most have none and take no memory); the Node watch (`node-source.ts`) says what a Node event
 * changed.
 */
import { matchesLabels } from '../kube/labels.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ObjectKey } from '../queue/names.ts';
import { appKey } from './keys.ts';
import type { NodeChange } from './node-labels.ts';

/** What the App sources report of every App they see (`sources.ts`). */
export interface AppObserver {
  seen(key: string, obj: KubeObject): void;
  gone(key: string): void;
  retain(keep: (key: string) => boolean): void;
}

interface Pool {
  key: ObjectKey;
  selector: Readonly<Record<string, string>>;
}

function poolOf(obj: KubeObject): Readonly<Record<string, string>> | undefined {
  const prewarm = (obj as { spec?: { imagePrewarm?: { enabled?: boolean; nodeSelector?: Record<string, string> } } }).spec?.imagePrewarm;
  if (prewarm?.enabled !== true || !prewarm.nodeSelector || Object.keys(prewarm.nodeSelector).length === 0) return undefined;
  return prewarm.nodeSelector;
}

export class WarmPools implements AppObserver {
  private readonly pools = new Map<string, Pool>();

  seen(key: string, obj: KubeObject): void {
    const selector = poolOf(obj);
    const app = appKey(obj);
    if (selector && app) this.pools.set(key, { key: app, selector });
    else this.pools.delete(key);
  }

  gone(key: string): void {
    this.pools.delete(key);
  }

  retain(keep: (key: string) => boolean): void {
    for (const key of this.pools.keys()) if (!keep(key)) this.pools.delete(key);
  }

  get size(): number {
    return this.pools.size;
  }

  /** The pool Apps whose selector `labels` match. */
  matching(labels: Readonly<Record<string, string>>): ObjectKey[] {
    const keys: ObjectKey[] = [];
    for (const pool of this.pools.values()) if (matchesLabels(labels, pool.selector)) keys.push(pool.key);
    return keys;
  }

  /**
   * The Apps a Node change (`node-source.ts`) concerns. A Node listed or added: the pools it matches. Its labels
   * changed: every pool App, since the labels it had are not kept and it may have left a pool (label changes are
   * rare). Deleted: the pools its last labels match, so their status drops it.
   */
  nodeEvent(obj: KubeObject, change: NodeChange): ObjectKey[] {
    if (change === 'none') return [];
    if (change === 'relabelled') return [...this.pools.values()].map((p) => p.key);
    return this.matching(obj.metadata?.labels ?? {});
  }
}

/** One observer that reports to several (the alert states and the warm pools). */
export function observers(...list: (AppObserver | undefined)[]): AppObserver {
  const all = list.filter((o): o is AppObserver => o !== undefined);
  return {
    seen: (key, obj) => all.forEach((o) => o.seen(key, obj)),
    gone: (key) => all.forEach((o) => o.gone(key)),
    retain: (keep) => all.forEach((o) => o.retain(keep)),
  };
}
