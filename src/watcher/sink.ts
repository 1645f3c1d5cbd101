/**
 * The watcher's sink: where its watch sources hand keys to enqueue (in each key's shard, with the tenant's
 * priority), the pod events they hold, the objects too large to read, the shared view, and the watcher's counters.
 */
import type { Logger } from '../common/log.ts';
import { errorMessage } from '../common/errors.ts';
import type { OversizedObject } from '../kube/paged-list.ts';
import type { ResourceRef } from '../kube/paths.ts';
import { enqueue, forKey, formatKey, type ObjectKey, type ReconcileQueue, type TenantRates } from '../queue/index.ts';
import type { ViewFeed } from '../view/writer.ts';
import type { WatcherMetrics } from './metrics.ts';
import { PodHolds } from './pod-holds.ts';
import { ENQUEUE_CHUNK } from './resync-run.ts';
import { KnownKeys, type Sink } from './sources.ts';

export interface SinkHooks {
  /** Work was enqueued: the KEDA scaler re-reads the backlog. */
  onWork: () => void;
  signal: AbortSignal;
  onTooLarge: (ref: ResourceRef, obj: OversizedObject) => void;
  view: ViewFeed | undefined;
}

export function makeSink(queues: readonly ReconcileQueue[], tenants: TenantRates, metrics: WatcherMetrics, log: Logger, hooks: SinkHooks): Sink {
  const known = new KnownKeys();
  const { onWork } = hooks;
  const one = async (key: ObjectKey, cause: string): Promise<void> => {
    try {
      // Tenant fairness: a namespace that enqueues a flood waits behind quieter namespaces' changes.
      const r = await enqueue(forKey(queues, key), key, { priority: tenants.priorityFor(key.namespace) });
      metrics.enqueued.inc({ cause, outcome: r.outcome });
      if (r.outcome !== 'skipped') onWork();
    } catch (err) {
      metrics.enqueued.inc({ cause, outcome: 'error' });
      log.warn({ key: formatKey(key), err: errorMessage(err) }, 'enqueue failed');
      throw err;
    }
  };
  // A held pod event whose hold ran out: enqueued like any event. A failed enqueue is logged by `one`; it means
  // Redis is unreachable, and once Redis answers again every known object is enqueued (`onRedisRestored`).
  const holds = new PodHolds({
    fire: (key) => void one(key, 'event').catch(() => undefined),
    signal: hooks.signal,
    onReleased: (reason) => metrics.watchIgnored.inc({ resource: 'pods', reason }),
  });
  return {
    known,
    holds,
    enqueue: async (keys, cause) => {
      for (let i = 0; i < keys.length; i += ENQUEUE_CHUNK) {
        await Promise.all(keys.slice(i, i + ENQUEUE_CHUNK).map((k) => one(k, cause)));
      }
      metrics.knownObjects.set(known.size);
    },
    onWatchEvent: (resource, type) => metrics.watchEvents.inc({ resource, type }),
    onIgnored: (resource, reason) => metrics.watchIgnored.inc({ resource, reason }),
    onRestart: (source) => metrics.watchRestarts.inc({ source }),
    onTooLarge: (ref, obj) => {
      metrics.objectsTooLarge.inc({ resource: ref.resource });
      hooks.onTooLarge(ref, obj);
    },
    view: hooks.view,
  };
}
