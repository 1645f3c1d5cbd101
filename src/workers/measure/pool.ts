/**
 * A worker's measure pool: consumes the measure queue with its own slots (`EBB_MEASURE_CONCURRENCY`), so a check
 * that answers slowly holds a measure slot, never a reconcile's. Each job takes one measurement with the worker's
 * bounded egress (the same `measureWeb`/`measurePrometheus` as before), stores it (`store.ts`) and wakes the App
 * (a `measured` timer due now, fired by the watcher at the App's tenant priority), whose next reconcile judges it.
 * One namespace's measurements running at once are capped across every worker (`namespace-gate.ts` in a key
 * space of its own, the share taken of the live measure slots).
 */
import { DelayedError, Worker, type Job } from 'bullmq';
import { errorSummary } from '../../common/errors.ts';
import { sleep } from '../../common/wait.ts';
import { throttledWarn, type Logger } from '../../common/log.ts';
import type { KubeRest } from '../../kube/rest.ts';
import type { RedisClient } from '../../queue/connection.ts';
import { MEASURE_LEASE_MS, measureQueue, measureWorkerOptions, type MeasureJob, type MeasureQueue } from '../../queue/measure-queue.ts';
import { MEASURE_QUEUE, type ObjectKey } from '../../queue/names.ts';
import { namespaceGate, type NamespaceCap, type NamespaceGate } from '../../queue/namespace-gate.ts';
import type { QueueConfig } from '../../queue/settings.ts';
import { workerSlots, type WorkerSlots } from '../../queue/worker-slots.ts';
import { secretValue } from '../../kube/reads.ts';
import { measureOne } from '../app/rollout/analysis/measure.ts';
import type { MeasureDesk, QueryVariables } from '../app/model/analysis-io.ts';
import type { CheckHttp } from '../egress/outbound.ts';
import { measureDesk } from './desk.ts';
import { ownMeasureJob } from './identity.ts';
import { redisResultStore, type ResultStore } from './store.ts';

/** The timer reason that wakes an App when one of its measurements is done. */
export const MEASURED_TIMER = 'measured';
/** A job over its namespace's cap is tried again after this long, up to twice it. */
const CAP_DELAY_MS = 1_000;
/** How often the pool renews its slots in the registry a share cap reads. */
const SLOTS_HEARTBEAT_MS = 5_000;

export interface MeasurePoolOptions {
  /** Measurements this worker takes at once. */
  concurrency: number;
  /** One namespace's measurements running at once, every worker together. */
  namespaceCap: NamespaceCap;
}

export interface MeasureDeps {
  rest: KubeRest;
  http: CheckHttp;
  store: ResultStore;
  /** Wakes the App now (its reconcile judges the result). */
  wake(key: ObjectKey): Promise<void>;
  gate: NamespaceGate | undefined;
  log: Logger;
  now?: () => Date;
}

/** The gate fails open: a Redis error never stops a measurement. */
async function admitted(gate: NamespaceGate, namespace: string, member: string): Promise<boolean> {
  return gate.acquire(namespace, member, Date.now()).catch(() => true);
}

/** Runs one measure job: checks it is ebb's, waits its namespace's turn, measures, stores, wakes the App. */
export function measureProcessor(deps: MeasureDeps) {
  const now = deps.now ?? (() => new Date());
  return async (job: Job<MeasureJob, void, string>, token?: string, signal?: AbortSignal): Promise<void> => {
    const data = ownMeasureJob(job.id, job.data);
    if (!data) {
      deps.log.warn({ jobId: String(job.id).slice(0, 300) }, "measure job is not ebb's own form; dropping it");
      return;
    }
    const id = job.id ?? '';
    const { gate } = deps;
    if (gate && !(await admitted(gate, data.namespace, id))) {
      await sleep(200, signal).catch(() => undefined);
      if (!(await admitted(gate, data.namespace, id))) {
        await job.moveToDelayed(Date.now() + gate.retryDelayMs(), token);
        throw new DelayedError();
      }
    }
    try {
      const s = signal ?? new AbortController().signal;
      const io = { secretValue: (ns: string, name: string, key: string) => secretValue(deps.rest, s, ns, name, key), http: deps.http, signal: s };
      const m = await measureOne(io, data.namespace, { check: data.check, vars: data.vars as QueryVariables }, now);
      await deps.store.write(id, m);
      await deps.wake({ kind: 'App', namespace: data.namespace, name: data.name });
    } finally {
      await gate?.release(data.namespace, id).catch(() => undefined);
    }
  };
}

export interface MeasurePool {
  /** What the worker's reconciles hand their due measurements to. */
  desk: MeasureDesk;
  isRunning(): boolean;
  close(force?: boolean): Promise<void>;
}

/**
 * Starts the pool on `blocking` (a worker connection) and `producer`; `wake` sets the App's timer. The desk adds
 * to the same queue.
 */
export async function startMeasurePool(
  conn: { blocking: RedisClient; producer: RedisClient },
  cfg: QueueConfig,
  opts: MeasurePoolOptions,
  deps: Omit<MeasureDeps, 'store' | 'gate'>,
): Promise<MeasurePool> {
  const store = redisResultStore(conn.producer, cfg.prefix);
  const queue: MeasureQueue = measureQueue(conn.producer, cfg);
  queue.on('error', (err: Error) => deps.log.debug({ err: err.message }, 'measure queue connection error'));
  const space = `${cfg.prefix}:measure`;
  const gate = namespaceGate(conn.producer, space, { cap: opts.namespaceCap, leaseMs: MEASURE_LEASE_MS, minDelayMs: CAP_DELAY_MS });
  const slots: WorkerSlots = workerSlots(conn.producer, space, { slots: opts.concurrency, everyMs: SLOTS_HEARTBEAT_MS, log: deps.log });
  await slots.start();
  const worker = new Worker<MeasureJob, void, string>(
    MEASURE_QUEUE,
    measureProcessor({ ...deps, store, gate }),
    measureWorkerOptions(conn.blocking, cfg, opts.concurrency),
  );
  worker.on('error', throttledWarn(deps.log, 'measure worker error'));
  worker.on('failed', (job, err) => deps.log.warn({ jobId: job?.id, attempt: job?.attemptsMade, err: errorSummary(err) }, 'measurement not stored'));
  return {
    desk: measureDesk(store, queue),
    isRunning: () => worker.isRunning(),
    close: async (force = false) => {
      await worker.close(force);
      await slots.stop();
      await queue.close();
    },
  };
}
