import path from 'node:path';
import { Server, ServerCredentials, status, type ServerWritableStream, type ServiceDefinition, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { Logger } from '../common/log.ts';
import { errorMessage } from '../common/errors.ts';
import { recheckDelay } from './recheck.ts';
import type { ScalerTlsPem } from './scaler-settings.ts';

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

/**
 * `threadBacklog` from the trigger metadata: the backlog left to the watcher's worker thread before worker
 * processes are asked for (default: `jobsPerWorker`, the thread being one worker).
 */
export function threadBacklog(meta: Record<string, string> | undefined): number {
  const raw = meta?.['threadBacklog'];
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== '' && Number.isInteger(n) && n >= 0 ? n : jobsPerWorker(meta);
}

/** The backlog worker processes are asked for: what is past the part left to the watcher's thread. */
export const processBacklog = (total: number, left: number): number => Math.max(0, total - left);

function loadService(): ServiceDefinition {
  const pkg = loadSync(PROTO_PATH, { keepCase: true, longs: Number, defaults: true });
  return pkg['externalscaler.ExternalScaler'] as ServiceDefinition;
}

export interface ScalerServer {
  port: number;
  /**
   * Tells open StreamIsActive streams that work arrived (called on every enqueue): the backlog is re-read once for
   * all, unless every stream was already told "active" (an enqueue cannot change that answer).
   */
  notify(): void;
  close(): Promise<void>;
}

/** One open StreamIsActive stream: what it was last told. */
interface Stream {
  ref: string;
  /** The backlog left to the watcher's worker thread, for this ScaledObject. */
  left(): number;
  last: boolean | undefined;
  write(active: boolean): void;
}

/**
 * The KEDA external-push scaler served by the always-on watcher. The backlog counts waiting, prioritized,
 * active and soon-due delayed jobs (so retries and timers are not stranded at zero workers) and is 0 while
 * the queue is paused. All StreamIsActive streams share one backlog read: it runs the moment work is enqueued
 * (`notify`) and re-checks by itself (`recheckDelay`): every `recheckMs` (1 s) while active; while inactive
 * when a delayed job enters the due window, else every `idleRecheckMs` (15 s). Each stream is written only
 * when its answer changes. At most `maxStreams` streams are open; with `tls`, only clients whose certificate
 * the given CA signed are served.
 */
export async function startScaler(opts: {
  address: string;
  port: number;
  backlog: BacklogProbe;
  log: Logger;
  recheckMs?: number;
  idleRecheckMs?: number;
  maxStreams?: number;
  tls?: ScalerTlsPem | undefined;
  /**
   * The backlog left to the watcher's worker thread for a ScaledObject's metadata (0 while no thread runs):
   * KEDA is active, and its metric counts, only past it. Undefined: no thread (0).
   */
  leftToThread?: ((meta: Record<string, string> | undefined) => number) | undefined;
}): Promise<ScalerServer> {
  const activeMs = opts.recheckMs ?? 1000;
  const idleMs = opts.idleRecheckMs ?? 15_000;
  const maxStreams = opts.maxStreams ?? 64;
  const left = opts.leftToThread ?? ((): number => 0);
  const due = async (ref: ScaledObjectRef): Promise<number> => processBacklog(reading(await opts.backlog()).total, left(ref.scalerMetadata));
  const server = new Server();
  const streams = new Set<Stream>();
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
  const check = sharedCheck({ backlog: opts.backlog, streams, log: opts.log, activeMs, idleMs });
  server.addService(loadService(), {
    IsActive: unary(async (ref: ScaledObjectRef) => ({ result: (await due(ref)) > 0 })),
    GetMetricSpec: unary((ref: ScaledObjectRef) => {
      const target = jobsPerWorker(ref.scalerMetadata);
      return Promise.resolve({ metricSpecs: [{ metricName: METRIC_NAME, targetSize: target, targetSizeFloat: target }] });
    }),
    GetMetrics: unary(async (req: { scaledObjectRef?: ScaledObjectRef }) => {
      const value = await due(req.scaledObjectRef ?? { name: '', namespace: '', scalerMetadata: {} });
      return { metricValues: [{ metricName: METRIC_NAME, metricValue: value, metricValueFloat: value }] };
    }),
    StreamIsActive: (call: ServerWritableStream<ScaledObjectRef, { result: boolean }>) => {
      const ref = `${call.request.namespace}/${call.request.name}`;
      if (streams.size >= maxStreams) {
        opts.log.warn({ scaledObject: ref, maxStreams }, 'scaler stream refused: too many open streams');
        call.emit('error', { code: status.RESOURCE_EXHAUSTED, details: `at most ${maxStreams} streams` });
        return;
      }
      const meta = call.request.scalerMetadata;
      const stream: Stream = { ref, left: () => left(meta), last: undefined, write: (active) => void (call.cancelled || call.write({ result: active })) };
      streams.add(stream);
      opts.log.debug({ scaledObject: ref, streams: streams.size }, 'scaler stream opened');
      const end = (): void => {
        if (!streams.delete(stream)) return;
        opts.log.debug({ scaledObject: ref, streams: streams.size }, 'scaler stream closed');
        if (streams.size === 0) check.idle();
      };
      call.on('cancelled', end);
      call.on('close', end);
      check.now();
    },
  });
  const credentials = opts.tls
    ? ServerCredentials.createSsl(opts.tls.clientCa, [{ private_key: opts.tls.key, cert_chain: opts.tls.cert }], true)
    : ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${opts.address}:${opts.port}`, credentials, (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    port,
    notify: () => {
      if (streams.size > 0) check.enqueued();
    },
    close: () =>
      new Promise<void>((resolve) => {
        check.idle();
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000).unref();
      }),
  };
}

/**
 * The one backlog read behind every stream. One read at a time; a `now()` during a read re-reads after it, so
 * an enqueue that lands after the read started is never missed. Writes only changes: KEDA acts on "active",
 * and scales to zero from its own polling after the cooldown.
 */
function sharedCheck(o: { backlog: BacklogProbe; streams: Set<Stream>; log: Logger; activeMs: number; idleMs: number }): {
  now(): void;
  enqueued(): void;
  idle(): void;
} {
  let checking = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  const now = (): void => {
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    clearTimeout(timer);
    let growsAt: number | undefined;
    let soon = true;
    o.backlog()
      .then(
        (r) => {
          const { total: n, growsAt: g } = reading(r);
          let anyActive = false;
          for (const s of o.streams) {
            const active = processBacklog(n, s.left()) > 0;
            if (s.last !== active) s.write(active);
            s.last = active;
            anyActive ||= active;
          }
          growsAt = g;
          soon = anyActive;
        },
        (err: unknown) => o.log.debug({ err: errorMessage(err) }, 'scaler backlog check failed'),
      )
      .finally(() => {
        checking = false;
        if (again) {
          again = false;
          now();
        } else if (o.streams.size > 0) {
          // A failed read is retried as soon as an active stream's.
          timer = setTimeout(now, recheckDelay({ active: soon, now: Date.now(), growsAt, activeMs: o.activeMs, idleMs: o.idleMs }));
        }
      });
  };
  // An enqueue only grows the backlog: with every stream told "active" and no read under way, it changes no
  // answer, so a burst of enqueues is not a burst of backlog reads (the periodic re-check still runs).
  const enqueued = (): void => {
    if (!checking && o.streams.size > 0 && [...o.streams].every((s) => s.last === true)) return;
    now();
  };
  return { now, enqueued, idle: () => clearTimeout(timer) };
}
