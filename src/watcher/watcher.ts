import { Worker } from 'bullmq';
import type { RedisClient } from '../queue/connection.ts';
import { sleep } from '../common/wait.ts';
import { startOpsServer } from '../common/http.ts';
import { throttledWarn, type Logger } from '../common/log.ts';
import { kubeClient } from '../kube/client.ts';
import {
  applyLimitsWithOverrides,
  createReconcileQueues,
  createTimersQueues,
  forKey,
  processTimer,
  redisConnection,
  registerQueueMetrics,
  TenantRates,
  timersWorkerOptions,
  type ReconcileQueue,
  type TimerData,
} from '../queue/index.ts';
import type { WatcherConfig } from './config.ts';
import { watcherMetrics } from './metrics.ts';
import type { BacklogReading, ScalerServer } from './scaler.ts';
import { enqueueResync, runResyncs } from './resync-run.ts';
import { notifyQueue } from '../queue/notify-queue.ts';
import { measureQueue, type MeasureQueue } from '../queue/measure-queue.ts';
import { workerBacklog } from '../queue/backlog.ts';
import { AppStates } from './app-conditions.ts';
import { RolloutStore } from './rollouts/store.ts';
import { boardMounts } from './board-mounts.ts';
import { observers } from './warm-pools.ts';
import { runSource, sourceSpecs, type SourceState } from './sources.ts';
import { errorMessage } from '../common/errors.ts';
import { RedisReachability } from '../queue/reachability.ts';
import { supervise } from './supervise.ts';
import { tooLargeEvents } from './too-large-events.ts';
import type { ResourceRef } from '../kube/paths.ts';
import { keepViewAlive, redisViewFeed } from '../view/writer.ts';
import type { WorkerThread } from './worker-thread.ts';
import { backlogLeftTo, threadMetrics, workerThreadIfOn, type WatcherDeps } from './thread-start.ts';
import { makeSink } from './sink.ts';

export type { WatcherDeps } from './thread-start.ts';

/** Delayed jobs due within this window count as backlog for the KEDA scaler. */
const SCALER_DUE_WINDOW_MS = 30_000;

export interface RunningWatcher {
  httpPort: number;
  scalerPort: number | undefined;
  /** The worker thread (`EBB_WATCHER_WORKER_THREAD`); undefined when off. */
  workerThread: WorkerThread | undefined;
  /** How long `stop` may wait for the worker thread's running reconciles beyond the watcher's own stop (0: no thread). */
  workerThreadStopMs: number;
  states(): Record<string, SourceState>;
  /** Enqueues every known object now (what a full periodic resync does). */
  resync(): Promise<number>;
  stop(): Promise<void>;
}

async function redisProblem(redis: RedisClient): Promise<string | undefined> {
  try {
    await Promise.race([redis.ping(), sleep(2000).then(() => Promise.reject(new Error('ping timed out')))]);
    return undefined;
  } catch (err) {
    return `redis: ${errorMessage(err)}`;
  }
}

/** The KEDA scaler, loaded only when it is on (gRPC and the proto loader). */
async function startScalerIfOn(
  cfg: WatcherConfig,
  queues: readonly ReconcileQueue[],
  measure: MeasureQueue,
  log: Logger,
  thread: WorkerThread | undefined,
): Promise<ScalerServer | undefined> {
  if (cfg.scalerPort === undefined) return undefined;
  const { startScaler, threadBacklog } = await import('./scaler.ts');
  const { readScalerTls } = await import('./scaler-settings.ts');
  // Every worker consumes every shard and the measure queue: the backlog KEDA scales on is their sum (measurements
  // waiting alone start a worker too).
  const backlog = (): Promise<BacklogReading> => workerBacklog(queues, measure, SCALER_DUE_WINDOW_MS);
  const tls = cfg.scalerTls ? readScalerTls(cfg.scalerTls) : undefined;
  const leftToThread = thread ? (meta: Record<string, string> | undefined): number => backlogLeftTo(thread, threadBacklog(meta)) : undefined;
  return startScaler({ address: cfg.httpAddress, port: cfg.scalerPort, backlog, log, maxStreams: cfg.scalerMaxStreams, tls, leftToThread });
}

/**
 * The always-on watcher: list+watch Apps, their Pods and ImageLists, turning every event into an
 * idempotent reconcile enqueue; runs the timers worker; resyncs periodically; serves health and metrics.
 */
export async function startWatcher(cfg: WatcherConfig, log: Logger, deps: WatcherDeps = {}): Promise<RunningWatcher> {
  const threadStart = await workerThreadIfOn(cfg, deps);
  const ac = new AbortController();
  const rest = await kubeClient(cfg.kube);
  // Redis holds only intent, and a Redis that comes back may have lost it (a restart without persistence, a
  // failover to a replica behind): the jobs and timers of objects nothing else will wake (a pod waiting out
  // its in-place grace period). Everything known is enqueued again as soon as Redis answers, as a resync.
  let onRedisRestored = (): void => undefined;
  const reachability = new RedisReachability();
  const producer = redisConnection(cfg.queue.redis, {
    forWorker: false,
    name: 'ebb-watcher',
    log,
    commandTimeoutMs: cfg.queue.redisCommandTimeoutMs,
    reachability,
    onRestored: () => onRedisRestored(),
  });
  const blocking = redisConnection(cfg.queue.redis, { forWorker: true, name: 'ebb-watcher-timers', log, commandTimeoutMs: cfg.queue.redisCommandTimeoutMs });
  // One reconcile and one timers queue per shard (indexed by shard); an object's jobs and timers are in its own.
  const queues = createReconcileQueues(producer, cfg.queue);
  const timers = createTimersQueues(producer, cfg.queue);
  const measure = measureQueue(producer, cfg.queue);
  const all = [...queues, ...timers, measure];
  // The notify queue is the workers' (rollout notifications); the board shows its deliveries too.
  const shown = cfg.board ? [...all, notifyQueue(producer, cfg.queue)] : all;
  // BullMQ prints a Queue's connection errors raw to stderr unless someone listens; the connection
  // already logs them (structured, rate-limited).
  for (const q of shown) q.on('error', (err: Error) => log.debug({ err: err.message }, 'queue connection error'));
  const appStates = new AppStates();
  const metrics = watcherMetrics(appStates);
  registerQueueMetrics(metrics.registry, all);
  // Started after the watches; enqueues before that have no stream to notify.
  let scaler: ScalerServer | undefined = undefined;
  const tenants = new TenantRates(cfg.queue.fairness);
  const eventsOf = (namespace: string): ResourceRef => ({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace });
  const onTooLarge = tooLargeEvents({ create: (ns, body, signal) => rest.create(eventsOf(ns), body, {}, signal) }, log);
  // The shared view: nothing of an earlier watcher's is trusted (events went unseen meanwhile); each source's
  // first list marks it whole again.
  const view = cfg.view ? redisViewFeed(producer, cfg.queue.prefix, { appPods: cfg.viewAppPods }) : undefined;
  const viewAlive = view ? keepViewAlive(view, ac.signal, log) : Promise.resolve();
  const sink = makeSink(queues, tenants, metrics, log, { onWork: () => scaler?.notify(), signal: ac.signal, onTooLarge, view });
  const states: Record<string, SourceState> = {};
  // The rollouts page's list, kept from the App events only while the board (and so the page) is on.
  const rollouts = cfg.board ? new RolloutStore() : undefined;
  const specs = sourceSpecs(cfg.namespaces, observers(appStates, rollouts), sink.known);
  for (const s of specs) states[s.name] = 'starting';

  // Not awaited: BullMQ waits for Redis to be ready, and a watcher started while Redis is down must still
  // start (serve /readyz, watch, retry). The knobs are applied as soon as Redis answers, and again at resync;
  // an operator's runtime override (`ebb queue concurrency|rate-limit`) wins over the configured value.
  void applyLimitsWithOverrides(queues, producer, cfg.queue).catch((err: unknown) =>
    log.warn({ err: String(err) }, 'could not apply queue knobs yet; will retry at resync'),
  );
  // One timers Worker per shard; a fired timer enqueues in its object's shard.
  const timersWorkers = timers.map(
    (t, shard) =>
      new Worker<TimerData, void, string>(
        t.name,
        (job) => processTimer(job, forKey(queues, job.data.key), (key) => tenants.priorityFor(key.namespace)),
        timersWorkerOptions(blocking, cfg.queue, shard),
      ),
  );
  const timersError = throttledWarn(log, 'timers worker error');
  for (const w of timersWorkers) {
    w.on('error', timersError);
    // A fired timer enqueued a reconcile: the scaler re-reads the backlog now, not at its next idle re-check.
    w.on('completed', () => scaler?.notify());
  }

  // Each source supervised on its own: one that fails is restarted alone, the others keep watching.
  const loops = specs.map((spec) => {
    const sourceLog = log.child({ source: spec.name });
    const run = (): Promise<void> =>
      runSource(spec, { rest, sink, log: sourceLog, signal: ac.signal, watchdogMs: cfg.watchdogMs, setState: (s) => (states[spec.name] = s) });
    return supervise(run, {
      signal: ac.signal,
      log: sourceLog,
      onFailure: () => {
        states[spec.name] = 'backoff';
        metrics.sourceRestarts.inc({ source: spec.name });
      },
    });
  });
  onRedisRestored = () => {
    // A Redis back from an outage may have lost writes (a failover to a replica behind): the view is not trusted again.
    void view?.forget().catch(() => undefined);
    enqueueResync(sink.known.all(), queues, metrics).then(
      (n) => log.info({ objects: n }, 'redis back: resync enqueued'),
      (err: unknown) => log.warn({ err: errorMessage(err) }, 'resync after the Redis outage failed; the next period retries'),
    );
  };
  const resyncLoop = runResyncs({
    periodMs: cfg.queue.resyncPeriodMs,
    signal: ac.signal,
    sink,
    queues,
    metrics,
    log,
    applyLimits: () => applyLimitsWithOverrides(queues, producer, cfg.queue),
  });

  const thread = threadStart.start(log, metrics);
  const ops = await startOpsServer({
    log,
    address: cfg.httpAddress,
    port: cfg.httpPort,
    registry: metrics.registry,
    ...threadMetrics(thread),
    healthz: () => reachability.problem(cfg.redisUnhealthyAfterMs),
    mounts: await boardMounts(cfg, cfg.board ? shown : [], rest, log, rollouts),
    readyz: async () => {
      // Every problem, not only the first: with Redis down the watches fail too (their enqueues do), and
      // the answer must still say that Redis is the cause.
      const notWatching = Object.entries(states)
        .filter(([, s]) => s !== 'watching')
        .map(([n, s]) => `${n}:${s}`);
      const problems = [
        notWatching.length > 0 ? `watches not established (${notWatching.join(', ')})` : undefined,
        await redisProblem(producer),
        await thread?.readiness(),
      ];
      return problems.filter(Boolean).join('; ') || undefined;
    },
  });
  scaler = await startScalerIfOn(cfg, queues, measure, log, thread);
  if (cfg.boardNote) log.warn(cfg.boardNote);
  log.info(
    {
      port: ops.port,
      scalerPort: scaler?.port,
      board: cfg.board?.basePath,
      sources: specs.map((s) => s.name),
      workerThread: threadStart.described,
      namespaces: cfg.namespaces.length ? cfg.namespaces : 'all',
    },
    'watcher started',
  );

  return {
    httpPort: ops.port,
    scalerPort: scaler?.port,
    workerThread: thread,
    workerThreadStopMs: threadStart.stopMs,
    states: () => ({ ...states }),
    resync: () => enqueueResync(sink.known.all(), queues, metrics),
    stop: async () => {
      ac.abort();
      await Promise.all([...loops, resyncLoop, viewAlive]);
      // The sources are stopped: nothing new is enqueued. The thread's worker finishes its running reconciles
      // (bounded) while Redis, the timers and the endpoint are still there.
      await thread?.stop();
      await ops.close();
      await scaler?.close();
      await Promise.all(timersWorkers.map((w) => w.close()));
      await Promise.all(shown.map((q) => q.close()));
      await Promise.all([producer.quit().catch(() => undefined), blocking.quit().catch(() => undefined)]);
      log.info('watcher stopped');
    },
  };
}
