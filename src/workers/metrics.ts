import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function workerMetrics(): {
  registry: Registry;
  reconciles: Counter<'kind' | 'result'>;
  duration: Histogram<'kind' | 'result'>;
  latency: Histogram<'kind'>;
  capped: Counter;
  analysisMeasurements: Counter<'phase'>;
  viewReads: Counter<'from' | 'reason'>;
} {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ebb_worker_' });
  return {
    registry,
    reconciles: new Counter({
      name: 'ebb_reconcile_total',
      help: 'Reconciles by kind and result (done, wait, error).',
      labelNames: ['kind', 'result'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'ebb_reconcile_duration_seconds',
      help: 'Reconcile duration by kind and result.',
      labelNames: ['kind', 'result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'ebb_event_to_reconcile_seconds',
      help: 'Time from enqueue to the start of the reconcile (first attempts only).',
      labelNames: ['kind'],
      buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
      registers: [registry],
    }),
    viewReads: new Counter({
      name: 'ebb_view_reads_total',
      help: 'App reads of reconciles with EBB_VIEW on: from the view, or fresh from the apiserver and why (absent, not-listed, oversized, too-many-pods, unchecked, unwatched-pods, opaque-version, behind).',
      labelNames: ['from', 'reason'],
      registers: [registry],
    }),
    capped: new Counter({
      name: 'ebb_namespace_cap_delays_total',
      help: 'Reconcile jobs put back for a moment because their namespace had EBB_NAMESPACE_CONCURRENCY reconciles running.',
      registers: [registry],
    }),
    analysisMeasurements: new Counter({
      name: 'ebb_analysis_measurements_total',
      help: 'Analysis measurements taken, by phase (Successful, Failed, Inconclusive).',
      labelNames: ['phase'],
      registers: [registry],
    }),
  };
}
export type WorkerMetrics = ReturnType<typeof workerMetrics>;
