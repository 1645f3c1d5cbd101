import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The node daemon's Prometheus metrics, on one registry per daemon. */
export function daemonMetrics(): {
  registry: Registry;
  pulls: Counter<'result'>;
  pullDuration: Histogram;
  imagesPresent: Gauge;
  pullsInFlight: Gauge;
  runtimeUp: Gauge;
  imageFsUsedPercent: Gauge;
  statusWrites: Counter<'result'>;
  watchEvents: Counter<'type'>;
} {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ebb_daemon_' });
  return {
    registry,
    pulls: new Counter({
      name: 'ebb_daemon_pulls_total',
      help: 'Image pulls, by result: success, cancelled, or the failure code (NotFound, Unavailable, Timeout, Auth, Runtime, Secret).',
      labelNames: ['result'],
      registers: [registry],
    }),
    pullDuration: new Histogram({
      name: 'ebb_daemon_pull_duration_seconds',
      help: 'Duration of image pulls that finished (successful or not).',
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers: [registry],
    }),
    imagesPresent: new Gauge({ name: 'ebb_daemon_images_present', help: "Images of the node's ImageList the runtime holds.", registers: [registry] }),
    pullsInFlight: new Gauge({ name: 'ebb_daemon_pulls_in_flight', help: 'Pulls running now.', registers: [registry] }),
    runtimeUp: new Gauge({
      name: 'ebb_daemon_runtime_up',
      help: 'Whether the container runtime answered the last CRI Version call (1) or not (0); 0 until it first answers.',
      registers: [registry],
    }),
    imageFsUsedPercent: new Gauge({
      name: 'ebb_daemon_image_fs_used_percent',
      help: "Used percent of the runtime's image filesystem at the last reading (as the kubelet's image garbage collection measures it); absent until read.",
      registers: [registry],
    }),
    statusWrites: new Counter({
      name: 'ebb_daemon_status_writes_total',
      help: 'Writes of the ImageList status, by result (ok, conflict, error).',
      labelNames: ['result'],
      registers: [registry],
    }),
    watchEvents: new Counter({
      name: 'ebb_daemon_watch_events_total',
      help: 'Watch events of the node ImageList, by type.',
      labelNames: ['type'],
      registers: [registry],
    }),
  };
}
export type DaemonMetrics = ReturnType<typeof daemonMetrics>;
