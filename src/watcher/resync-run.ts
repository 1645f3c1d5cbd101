/**
 * The watcher's resync runs over the reconcile queue of every shard (indexed by shard): each object is
 * enqueued in its own shard, the Redis-loss marker is kept per shard (a Cluster primary that lost its data
 * loses only its shards' marker), and failed jobs are read from every shard.
 */
import { connectionOf, enqueue, forKey, parseKey, type ReconcileQueue } from '../queue/index.ts';
import type { WatcherMetrics } from './metrics.ts';
import { failedJobIdsSince, markerPresent, resyncIsFull, resyncKeys, writeMarker } from './resync.ts';
import type { Sink } from './sources.ts';
import { errorMessage } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import { sleep } from '../common/wait.ts';

export const ENQUEUE_CHUNK = 64;

/** The Redis-loss marker's key within each shard's reconcile queue keys (`resync.ts`). */
const RESYNC_MARKER = 'ebb-resync-marker';

/** Enqueues `keys` (`formatKey` form) in the background (resync priority), each in its shard. */
export async function enqueueResync(keys: readonly string[], queues: readonly ReconcileQueue[], metrics: WatcherMetrics): Promise<number> {
  const parsed = keys.map(parseKey);
  for (let i = 0; i < parsed.length; i += ENQUEUE_CHUNK) {
    await Promise.all(
      parsed.slice(i, i + ENQUEUE_CHUNK).map(async (k) => {
        const r = await enqueue(forKey(queues, k), k, { background: true });
        metrics.enqueued.inc({ cause: 'resync', outcome: r.outcome });
      }),
    );
  }
  metrics.resyncs.inc();
  return parsed.length;
}

/** Writes every shard's Redis-loss marker (at start, and after a full resync). */
export async function writeMarkers(queues: readonly ReconcileQueue[]): Promise<void> {
  await Promise.all(
    queues.map(async (q) => {
      const redis = connectionOf(q);
      if (redis) await writeMarker(redis, q.toKey(RESYNC_MARKER));
    }),
  );
}

/** Whether every shard still has its marker (false when any shard's Redis lost its data). */
async function everyMarkerPresent(queues: readonly ReconcileQueue[]): Promise<boolean> {
  const present = await Promise.all(
    queues.map(async (q) => {
      const redis = connectionOf(q);
      return redis ? markerPresent(redis, q.toKey(RESYNC_MARKER)) : false;
    }),
  );
  return present.every(Boolean);
}

async function failedSince(queues: readonly ReconcileQueue[], since: number): Promise<string[]> {
  const lists = await Promise.all(
    queues.map(async (q) => {
      const redis = connectionOf(q);
      return redis ? failedJobIdsSince(redis, q.toKey('failed'), since) : [];
    }),
  );
  return lists.flat();
}

/** One periodic resync (`resync.ts`): full, or light (unsettled objects and those whose job failed since `since`). */
export async function periodicResync(
  sink: Sink,
  queues: readonly ReconcileQueue[],
  metrics: WatcherMetrics,
  round: number,
  since: number,
): Promise<{ objects: number; full: boolean; known: number }> {
  const full = resyncIsFull(round, await everyMarkerPresent(queues));
  const all = sink.known.all();
  const keys = resyncKeys({ full, all, unsettled: full ? [] : sink.known.unsettled(), failedJobIds: full ? [] : await failedSince(queues, since) });
  const objects = await enqueueResync(keys, queues, metrics);
  // Written only after a full resync: one written after a light one could hide a loss during that resync.
  if (full) await writeMarkers(queues);
  return { objects, full, known: all.length };
}

export interface ResyncLoop {
  periodMs: number;
  signal: AbortSignal;
  sink: Sink;
  queues: readonly ReconcileQueue[];
  metrics: WatcherMetrics;
  log: Logger;
  /** Applies the queue knobs (with the operators' overrides) again before each resync. */
  applyLimits(): Promise<unknown>;
}

/**
 * The periodic resync until `signal` aborts (none with a period of 0): the Redis-loss markers once Redis
 * answers, then every period the queue knobs and a resync (full when a marker is gone, else the failed jobs).
 */
export async function runResyncs(o: ResyncLoop): Promise<void> {
  if (o.periodMs <= 0) return;
  // The Redis-loss markers, once Redis answers (a start while Redis is down makes the first resync full).
  void writeMarkers(o.queues).catch(() => undefined);
  let since = Date.now();
  for (let round = 1; !o.signal.aborted; round++) {
    await sleep(o.periodMs, o.signal).catch(() => undefined);
    if (o.signal.aborted) break;
    const startedAt = Date.now();
    try {
      await o.applyLimits();
      const r = await periodicResync(o.sink, o.queues, o.metrics, round, since);
      since = startedAt;
      o.log.info({ objects: r.objects, full: r.full, known: r.known }, 'resync enqueued');
    } catch (err) {
      o.log.warn({ err: errorMessage(err) }, 'resync failed; next period retries');
    }
  }
}
