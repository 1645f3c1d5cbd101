/**
 * The worker's wiring of the shared view (`src/view/`, EBB_VIEW): the store its reconciles read, where their
 * reads are counted, and the App client that reads the view before the apiserver.
 */
import type { RedisClient } from '../queue/connection.ts';
import { VIEW_READS, viewedAppClient } from '../view/app-client.ts';
import { redisViewStore } from '../view/store.ts';
import type { AppClient } from './app/model/client.ts';
import type { WorkerMetrics } from './metrics.ts';
import type { ReconcileContext } from './types.ts';

/** The view reconciles read (through `redis`, under the queue prefix `prefix`) when `on`; undefined: every read is fresh. */
export function workerView(on: boolean, redis: RedisClient, prefix: string, metrics: WorkerMetrics): ReconcileContext['view'] {
  if (!on) return undefined;
  return { store: redisViewStore(redis, prefix), onRead: (from, reason) => metrics.viewReads.inc({ from, reason: reason ?? '' }) };
}

/** `client`, reading the App and its pods from the reconcile's view when it has one. */
export function viewedClient(client: AppClient, ctx: Pick<ReconcileContext, 'view' | 'signal'>): AppClient {
  const view = ctx.view;
  if (!view) return client;
  return viewedAppClient(client, { ...VIEW_READS, store: view.store, onRead: (from, reason) => view.onRead(from, reason), signal: ctx.signal, now: Date.now });
}
