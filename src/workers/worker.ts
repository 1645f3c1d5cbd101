import { Worker, type Job } from 'bullmq';
import { errorSummary } from '../common/errors.ts';
import { startOpsServer } from '../common/http.ts';
import { throttledWarn, type Logger } from '../common/log.ts';
import { kubeClient } from '../kube/client.ts';
import type { KubeRest } from '../kube/rest.ts';
import {
  createTimersQueues,
  forKey,
  formatKey,
  reconcileWorkerOptions,
  redisConnection,
  retryAfterGivingUp,
  setTimer,
  withRetryPolicy,
  RECONCILE_QUEUE,
  RETRY_AFTER_GIVING_UP,
  type ObjectKey,
  type ObjectKind,
} from '../queue/index.ts';
import { namespaceGate, type NamespaceGate } from '../queue/namespace-gate.ts';
import { admitOrDelay, NAMESPACE_CAP_DELAY_MS } from './namespace-admission.ts';
import { workerSlots } from '../queue/worker-slots.ts';
import { shardedQuarantine } from '../queue/quarantine.ts';
import { appQuarantineHooks } from './app/quarantine-hooks.ts';
import { ownJobKey } from '../queue/job-id.ts';
import { RedisReachability } from '../queue/reachability.ts';
import type { WorkerConfig } from './config.ts';
import { withQuarantine } from './quarantine.ts';
import { workerMetrics, type WorkerMetrics } from './metrics.ts';
import { workerView } from './view.ts';
import { writeJobLog } from './job-log.ts';
import { startNotifications } from './notify/deliver.ts';
import { notifyTargets } from './notify/targets.ts';
import { checkHttp } from './egress/outbound.ts';
import type { ReconcileContext, Reconciler, ReconcileResult } from './types.ts';
import { MEASURED_TIMER, startMeasurePool } from './measure/pool.ts';
import { redisPullBudget, type PullBudget } from './shared/pull-budget.ts';
import type { PrewarmPolicy } from './app/model/prewarm-policy.ts';

export interface RunningWorker {
  /** The port of its health and metrics endpoint; 0 when it serves none (`WorkerShell.serveOps`). */
  httpPort: number;
  /** Why it is not ready (a BullMQ worker or the measure pool not running); undefined: ready. */
  readiness(): string | undefined;
  /** Why it is not healthy (Redis out of reach too long); undefined: healthy. */
  health(): string | undefined;
  /** Its metrics in the Prometheus text format. */
  metrics(): Promise<string>;
  /** Stops taking jobs, waits (bounded) for running reconciles, closes connections. */
  stop(): Promise<void>;
}

/** How a worker is embedded: `ebb worker` serves its own endpoint; the watcher's worker thread is served by the watcher's. */
export interface WorkerShell {
  /** Serve /healthz, /readyz and /metrics on the configured address (default true). */
  serveOps?: boolean;
  /** Labels on every metric of this worker (the watcher's thread: `{thread: 'watcher'}`). */
  metricLabels?: Record<string, string>;
}

interface ProcessorDeps {
  reconcilers: Partial<Record<ObjectKind, Reconciler>>;
  /** The per-namespace cap on running reconciles; undefined: none. */
  gate: NamespaceGate | undefined;
  rest: KubeRest;
  log: Logger;
  metrics: WorkerMetrics;
  prewarmBudget: PullBudget;
  prewarmPolicy?: PrewarmPolicy | undefined;
  onWait(key: ObjectKey, result: NonNullable<ReconcileResult['wait']>): Promise<void>;
  notify: ReconcileContext['notify'];
  checks?: ReconcileContext['checks'];
  measure?: ReconcileContext['measure'];
  view?: ReconcileContext['view'];
}

/** A job's return value: its outcome, how long it took, and the reconciler's summary (Bull Board shows it). */
export type JobReturn = Readonly<Record<string, unknown>> & { result: 'done' | 'wait' | 'dropped'; ms: number };

/** How long a stopping worker gives its reconcilers' drain (Event series counts) before closing. */
const DRAIN_TIMEOUT_MS = 3_000;

const delay = (ms: number): Promise<'timeout'> => new Promise((r) => setTimeout(() => r('timeout'), ms).unref());

/** How often a worker renews its slots in the registry a share cap reads (`worker-slots.ts`). */
const SLOTS_HEARTBEAT_MS = 5_000;

/** Analysis measurements a reconcile reports (`{phase: count}`), into their counter. */
function countMeasurements(metrics: WorkerMetrics, measured: unknown): void {
  if (typeof measured !== 'object' || measured === null) return;
  for (const [phase, n] of Object.entries(measured)) if (typeof n === 'number') metrics.analysisMeasurements.inc({ phase }, n);
}

/** Runs one job: dispatch by kind, child logger, metrics, "wait" → timer. Errors go to the retry policy. */
function processor(deps: ProcessorDeps) {
  return async (job: Job<ObjectKey, JobReturn, string>, _token?: string, signal?: AbortSignal): Promise<JobReturn> => {
    const key = ownJobKey(job.id, job.data);
    if (!key) {
      deps.log.warn({ jobId: String(job.id).slice(0, 300), jobName: job.name.slice(0, 100) }, "job id is not ebb's own form; dropping job");
      return { result: 'dropped', ms: 0 };
    }
    const log = deps.log.child({ kind: key.kind, namespace: key.namespace, name: key.name, jobId: job.id, attempt: job.attemptsMade + 1 });
    const reconcile = deps.reconcilers[key.kind];
    if (!reconcile) {
      log.warn('no reconciler for this kind; dropping job');
      return { result: 'dropped', ms: 0 };
    }
    const gate = key.kind === 'App' ? deps.gate : undefined;
    const member = job.id ?? '';
    if (gate) await admitOrDelay(gate, key.namespace, job, _token, { metrics: deps.metrics, log, signal });
    const started = Date.now();
    if (job.attemptsMade === 0) deps.metrics.latency.observe({ kind: key.kind }, (started - job.timestamp) / 1000);
    log.debug({ enqueuedAt: job.timestamp, startedAt: started }, 'reconcile started');
    let result: 'done' | 'wait' | 'error' = 'error';
    try {
      const ctx = {
        rest: deps.rest,
        log,
        signal: signal ?? new AbortController().signal,
        now: () => new Date(),
        notify: deps.notify,
        checks: deps.checks,
        measure: deps.measure,
        prewarmBudget: deps.prewarmBudget,
        prewarmPolicy: deps.prewarmPolicy,
        view: deps.view,
      };
      const out = await reconcile(key, ctx);
      result = out.wait ? 'wait' : 'done';
      if (out.wait) await deps.onWait(key, out.wait);
      const ms = Date.now() - started;
      log.debug({ result, wait: out.wait, ms, startedAt: started, finishedAt: Date.now() }, 'reconcile finished');
      await writeJobLog(job, out.logs ?? [], log);
      countMeasurements(deps.metrics, out.summary?.['measurements']);
      return { result, ms, ...out.summary };
    } catch (err) {
      log.warn({ err: errorSummary(err), ms: Date.now() - started }, 'reconcile failed');
      throw err;
    } finally {
      await gate?.release(key.namespace, member).catch(() => undefined);
      deps.metrics.reconciles.inc({ kind: key.kind, result });
      deps.metrics.duration.observe({ kind: key.kind, result }, (Date.now() - started) / 1000);
    }
  };
}

/**
 * The BullMQ Worker shell of `ebb worker`: stateless, each job re-reads live state. Concurrency and lock
 * duration come from the queue config; shutdown is graceful and bounded.
 */
export async function startWorker(
  cfg: WorkerConfig,
  log: Logger,
  reconcilers: Partial<Record<ObjectKind, Reconciler>>,
  drain: () => Promise<void> = () => Promise.resolve(),
  shell: WorkerShell = {},
): Promise<RunningWorker> {
  const rest = await kubeClient(cfg.kube);
  const blocking = redisConnection(cfg.queue.redis, { forWorker: true, name: 'ebb-worker', log, commandTimeoutMs: cfg.queue.redisCommandTimeoutMs });
  const reachability = new RedisReachability();
  const producer = redisConnection(cfg.queue.redis, {
    forWorker: false,
    name: 'ebb-worker-timers',
    log,
    commandTimeoutMs: cfg.queue.redisCommandTimeoutMs,
    reachability,
  });
  // The timers queue of every shard: an object's timers go to its shard (`forKey`).
  const timers = createTimersQueues(producer, cfg.queue);
  // BullMQ prints a Queue's connection errors raw to stderr unless someone listens; the connection
  // already logs them (structured, rate-limited).
  for (const t of timers) t.on('error', (err: Error) => log.debug({ err: err.message }, 'queue connection error'));
  const metrics = workerMetrics();
  if (shell.metricLabels) metrics.registry.setDefaultLabels(shell.metricLabels);
  const onWait = async (key: ObjectKey, wait: NonNullable<ReconcileResult['wait']>): Promise<void> => {
    await setTimer(forKey(timers, key), key, wait.reason, Date.now() + Math.max(0, wait.afterMs));
  };
  // A key whose reconciles keep ending workers is held instead of taking the next one down too.
  const quarantine = {
    store: shardedQuarantine(producer, cfg.queue.prefix, cfg.queue.shards),
    limit: cfg.quarantineAfter,
    retryAfterMs: cfg.quarantineRetryAfterMs,
    hooks: { App: appQuarantineHooks },
  };
  const guarded = withQuarantine(reconcilers, quarantine);
  const gate = namespaceGate(producer, cfg.queue.prefix, {
    cap: cfg.namespaceConcurrency,
    leaseMs: 2 * cfg.queue.lockDurationMs,
    minDelayMs: NAMESPACE_CAP_DELAY_MS,
  });
  const slots = workerSlots(producer, cfg.queue.prefix, { slots: cfg.queue.workerConcurrency, everyMs: SLOTS_HEARTBEAT_MS, log });
  await slots.start();
  const checks = checkHttp(cfg.egress);
  // Measurements off the reconcile slots: their own pool, which wakes the App through its timer when one is done.
  const measurePool =
    cfg.measureConcurrency > 0
      ? await startMeasurePool(
          { blocking, producer },
          cfg.queue,
          { concurrency: cfg.measureConcurrency, namespaceCap: cfg.measureNamespaceConcurrency },
          { rest, http: checks, log, wake: async (key) => void (await setTimer(forKey(timers, key), key, MEASURED_TIMER, Date.now())) },
        )
      : undefined;
  const notifications = startNotifications(cfg.queue, notifyTargets(cfg, rest), log);
  const processJob = withRetryPolicy(
    processor({
      reconcilers: guarded,
      gate,
      rest,
      log,
      metrics,
      onWait,
      notify: notifications?.send,
      checks,
      measure: measurePool?.desk,
      prewarmBudget: redisPullBudget(producer, cfg.queue.prefix, cfg.prewarmPullBudget, Date.now, cfg.prewarmNamespaceLimits),
      prewarmPolicy: cfg.prewarmPolicy,
      view: workerView(cfg.view, producer, cfg.queue.prefix, metrics),
    }),
  );
  // One BullMQ Worker per queue shard, each with its share of EBB_WORKER_CONCURRENCY (`reconcileWorkerOptions`).
  const workers = Array.from(
    { length: cfg.queue.shards },
    (_, shard) => new Worker<ObjectKey, JobReturn, string>(RECONCILE_QUEUE, processJob, reconcileWorkerOptions(blocking, cfg.queue, shard)),
  );
  const workerError = throttledWarn(log, 'worker error');
  for (const worker of workers) {
    worker.on('error', workerError);
    worker.on('failed', (job, err) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) void gaveUp(job.data, job.attemptsMade, err);
    });
  }
  const gaveUp = async (key: ObjectKey, attemptsMade: number, err: Error): Promise<void> => {
    const retryInMs = retryAfterGivingUp(err, attemptsMade, cfg.queue.backoff);
    log.error({ key: formatKey(key), err: err.message, ...(retryInMs === undefined ? {} : { retryInMs }) }, 'reconcile gave up');
    if (retryInMs === undefined) return;
    await setTimer(forKey(timers, key), key, RETRY_AFTER_GIVING_UP, Date.now() + retryInMs).catch((timerErr: unknown) =>
      log.warn({ key: formatKey(key), err: errorSummary(timerErr) }, 'could not set the retry timer; the next event or resync reconciles'),
    );
  };
  const health = (): string | undefined => reachability.problem(cfg.redisUnhealthyAfterMs);
  const readiness = (): string | undefined => (workers.every((w) => w.isRunning()) && measurePool?.isRunning() !== false ? undefined : 'worker not running');
  const ops =
    shell.serveOps === false
      ? undefined
      : await startOpsServer({ log, address: cfg.httpAddress, port: cfg.httpPort, registry: metrics.registry, healthz: health, readyz: readiness });
  log.info({ concurrency: cfg.queue.workerConcurrency, shards: cfg.queue.shards, port: ops?.port }, 'worker started');
  return {
    httpPort: ops?.port ?? 0,
    readiness,
    health,
    metrics: () => metrics.registry.metrics(),
    stop: async () => {
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), cfg.shutdownTimeoutMs).unref());
      const closing = Promise.all([...workers.map((w) => w.close()), measurePool?.close()]).then(() => 'closed' as const);
      const closed = await Promise.race([closing, timeout]);
      if (closed === 'timeout') {
        log.warn({ timeoutMs: cfg.shutdownTimeoutMs }, 'running reconciles did not finish in time; forcing close');
        await Promise.all([...workers.map((w) => w.close(true)), measurePool?.close(true)]);
      }
      // No reconcile runs any more: what they left to write (Event series counts) goes now, within a bound.
      const drained = await Promise.race([drain().then(() => 'drained' as const), delay(DRAIN_TIMEOUT_MS)]).catch((err: unknown) => errorSummary(err));
      if (drained !== 'drained') log.warn({ timeoutMs: DRAIN_TIMEOUT_MS, err: drained }, 'Event series counts not all written before exit');
      await ops?.close();
      await slots.stop();
      await notifications?.close();
      await Promise.all(timers.map((t) => t.close()));
      await Promise.all([blocking.quit().catch(() => undefined), producer.quit().catch(() => undefined)]);
      log.info('worker stopped');
    },
  };
}
