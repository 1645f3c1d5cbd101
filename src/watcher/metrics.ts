import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { AppStates } from './app-conditions.ts';

/** The watcher's Prometheus metrics, on one registry per process. */
export function watcherMetrics(states?: AppStates): {
  registry: Registry;
  watchEvents: Counter<'resource' | 'type'>;
  watchRestarts: Counter<'source'>;
  watchIgnored: Counter<'resource' | 'reason'>;
  enqueued: Counter<'cause' | 'outcome'>;
  knownObjects: Gauge;
  resyncs: Counter;
  objectsTooLarge: Counter<'resource'>;
  sourceRestarts: Counter<'source'>;
  appsInState: Gauge<'state'>;
  workerThreadEnds: Counter<'end'>;
} {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ebb_watcher_' });
  return {
    registry,
    watchEvents: new Counter({
      name: 'ebb_watch_events_total',
      help: 'Watch events received, by resource and type.',
      labelNames: ['resource', 'type'],
      registers: [registry],
    }),
    watchIgnored: new Counter({
      name: 'ebb_watch_events_ignored_total',
      help: 'Watch events that needed no reconcile (status-only App updates), by resource and reason.',
      labelNames: ['resource', 'reason'],
      registers: [registry],
    }),
    watchRestarts: new Counter({
      name: 'ebb_watch_restarts_total',
      help: 'Re-lists after a broken or expired watch, by source.',
      labelNames: ['source'],
      registers: [registry],
    }),
    enqueued: new Counter({
      name: 'ebb_enqueue_total',
      help: 'Reconcile requests, by cause (list, event, resync) and outcome (added, merged, skipped, error).',
      labelNames: ['cause', 'outcome'],
      registers: [registry],
    }),
    knownObjects: new Gauge({ name: 'ebb_known_objects', help: 'Apps and ImageLists the watcher knows of (the resync set).', registers: [registry] }),
    resyncs: new Counter({ name: 'ebb_resync_total', help: 'Periodic resyncs run.', registers: [registry] }),
    objectsTooLarge: new Counter({
      name: 'ebb_objects_too_large_total',
      help: 'Objects (in a list or a watch event) left out because they are larger than the watcher reads, by resource.',
      labelNames: ['resource'],
      registers: [registry],
    }),
    sourceRestarts: new Counter({
      name: 'ebb_watch_source_failures_total',
      help: 'Sources that failed and were restarted (with backoff), by source.',
      labelNames: ['source'],
      registers: [registry],
    }),
    workerThreadEnds: new Counter({
      name: 'ebb_worker_thread_ends_total',
      help: "Ends of the watcher's worker thread it did not ask for (each followed by a restart), by why: heap-limit, error, exit.",
      labelNames: ['end'],
      registers: [registry],
    }),
    appsInState: new Gauge({
      name: 'ebb_apps_in_state',
      help: 'Apps by alertable state: rollout_held, aborted, quarantined, invalid_spec, failed_create_pod, progress_deadline_exceeded.',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        if (!states) return;
        for (const [state, n] of Object.entries(states.counts())) this.set({ state }, n);
      },
    }),
  };
}
export type WatcherMetrics = ReturnType<typeof watcherMetrics>;
