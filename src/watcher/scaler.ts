import path from 'node:path';
import { Server, ServerCredentials, status, type ServerWritableStream, type ServiceDefinition, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { Logger } from '../common/log.ts';
import { errorMessage } from '../common/errors.ts';
import { recheckDelay } from './recheck.ts';

const PROTO_PATH = path.join(import.meta.dirname, 'externalscaler.proto');
export const METRIC_NAME = 'ebb-reconcile-backlog';
const DEFAULT_JOBS_PER_WORKER = 50;

interface ScaledObjectRef {
  name: string;
  namespace: string;
  scalerMetadata: Record<string, string>;
}

/** A backlog reading: how much reconcile work is due, and when it grows by itself (`Backlog.growsAt`). */
export interface BacklogReading {
  total: number;
  growsAt?: number;
}

/** How much reconcile work is due: KEDA scales workers on it (0 → scale to zero). */
export type BacklogProbe = () => Promise<number | BacklogReading>;

const reading = (r: number | BacklogReading): BacklogReading => (typeof r === 'number' ? { total: r } : r);

/** `jobsPerWorker` from the ScaledObject's trigger metadata: the HPA target per worker replica. */
export function jobsPerWorker(meta: Record<string, string> | undefined): number {
  const n = Number(meta?.['jobsPerWorker']);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_JOBS_PER_WORKER;
}

function loadService(): ServiceDefinition {
  const pkg = loadSync(PROTO_PATH, { keepCase: true, longs: Number, defaults: true });
  return pkg['externalscaler.ExternalScaler'] as ServiceDefinition;
}

export interface ScalerServer {
  port: number;
  /** Tells open StreamIsActive streams that work arrived (called on every enqueue): each re-reads the backlog. */
  notify(): void;
  close(): Promise<void>;
}

/**
 * The KEDA external-push scaler served by the always-on watcher. The backlog counts waiting, prioritized,
 * active and soon-due delayed jobs (so retries and timers are not stranded at zero workers) and is 0 while
 * the queue is paused. StreamIsActive re-reads the backlog the moment work is enqueued (pushing `true` unless the
 * queue is paused) and re-checks by itself (`recheckDelay`): every `recheckMs` (1 s) while active; while
 * inactive when a delayed job enters the due window, else every `idleRecheckMs` (15 s).
 */
export async function startScaler(opts: {
  address: string;
  port: number;
  backlog: BacklogProbe;
  log: Logger;
  recheckMs?: number;
  idleRecheckMs?: number;
}): Promise<ScalerServer> {
  const activeMs = opts.recheckMs ?? 1000;
  const idleMs = opts.idleRecheckMs ?? 15_000;
  const total = async (): Promise<number> => reading(await opts.backlog()).total;
  const server = new Server();
  const streams = new Set<() => void>();
  const unary =
    <Req, Res>(fn: (req: Req) => Promise<Res>) =>
    (call: ServerUnaryCall<Req, Res>, cb: sendUnaryData<Res>): void => {
      fn(call.request).then(
        (res) => cb(null, res),
        (err: unknown) => {
          // The caller learns that the backlog could not be read, not why: the error stays in this log.
          opts.log.warn({ err: errorMessage(err) }, 'KEDA scaler: backlog unavailable');
          cb({ code: status.UNAVAILABLE, details: 'backlog unavailable' });
        },
      );
    };
  server.addService(loadService(), {
    IsActive: unary(async () => ({ result: (await total()) > 0 })),
    GetMetricSpec: unary((ref: ScaledObjectRef) => {
      const target = jobsPerWorker(ref.scalerMetadata);
      return Promise.resolve({ metricSpecs: [{ metricName: METRIC_NAME, targetSize: target, targetSizeFloat: target }] });
    }),
    GetMetrics: unary(async () => {
      const value = await total();
      return { metricValues: [{ metricName: METRIC_NAME, metricValue: value, metricValueFloat: value }] };
    }),
    StreamIsActive: (call: ServerWritableStream<ScaledObjectRef, { result: boolean }>) => {
      const ref = `${call.request.namespace}/${call.request.name}`;
      let last: boolean | undefined;
      let checking = false;
      let again = false;
      let timer: NodeJS.Timeout | undefined;
      let ended = false;
      // One backlog read at a time; a notify() during a read re-reads after it, so an enqueue that lands
      // after the read started is never missed. Writes only changes: KEDA acts on "active", and scales to
      // zero from its own polling after the cooldown.
      const check = (): void => {
        if (checking) {
          again = true;
          return;
        }
        checking = true;
        clearTimeout(timer);
        let growsAt: number | undefined;
        let soon = true;
        opts
          .backlog()
          .then(
            (r) => {
              const { total: n, growsAt: g } = reading(r);
              const active = n > 0;
              if (active !== last && !call.cancelled) call.write({ result: active });
              last = active;
              growsAt = g;
              soon = active;
            },
            (err: unknown) => opts.log.debug({ err: String(err) }, 'scaler backlog check failed'),
          )
          .finally(() => {
            checking = false;
            if (again) {
              again = false;
              check();
            } else if (!ended) {
              // A failed read is retried as soon as an active stream's.
              timer = setTimeout(check, recheckDelay({ active: soon, now: Date.now(), growsAt, activeMs, idleMs }));
            }
          });
      };
      // An enqueue re-reads the backlog at once instead of pushing "active" blindly: a paused queue (0)
      // must not wake a worker.
      streams.add(check);
      opts.log.info({ scaledObject: ref }, 'scaler stream opened');
      const end = (): void => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        streams.delete(check);
        opts.log.info({ scaledObject: ref }, 'scaler stream closed');
      };
      call.on('cancelled', end);
      call.on('close', end);
      check();
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${opts.address}:${opts.port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    port,
    notify: () => {
      for (const s of streams) s();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000).unref();
      }),
  };
}
