/**
 * A stand-in for KEDA scaling the worker Deployment between 0 and 1 replicas on the watcher's external scaler
 * (deploy/keda/scaledobject.yaml): it asks the scaler IsActive every `pollMs`, starts one worker process when
 * there is work and none runs, and stops it (SIGTERM) once the scaler has answered "no work" for `cooldownMs`
 * (KEDA's cooldownPeriod). Every worker's lifetime is recorded.
 */
import { join } from 'node:path';
import { credentials, loadPackageDefinition, type Client, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { sleep } from '../../../src/common/wait.ts';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import type { EbbProcess } from '../watcher/helpers.ts';

interface ScalerClient extends Client {
  IsActive(req: object, cb: (err: ServiceError | null, res: { result: boolean }) => void): void;
}

function scalerClient(port: number): ScalerClient {
  const def = loadSync(join(PROJECT_ROOT, 'src', 'watcher', 'externalscaler.proto'), { keepCase: true, longs: Number, defaults: true });
  type Ctor = new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => ScalerClient;
  const pkg = loadPackageDefinition(def) as unknown as { externalscaler: { ExternalScaler: Ctor } };
  return new pkg.externalscaler.ExternalScaler(`127.0.0.1:${port}`, credentials.createInsecure());
}

const SCALED_OBJECT = { name: 'ebb-worker', namespace: 'ebb-system', scalerMetadata: { jobsPerWorker: '50' } };

export interface WorkerSpan {
  proc: EbbProcess;
  startedAt: number;
  /** When the process had exited; undefined while it runs. */
  stoppedAt: number | undefined;
}

export interface Keda {
  readonly spans: readonly WorkerSpan[];
  /** Stops the loop and the worker it runs. */
  stop(): Promise<void>;
}

export interface KedaOptions {
  scalerPort: number;
  startWorker(name: string): EbbProcess;
  pollMs: number;
  cooldownMs: number;
}

export function startKeda(opts: KedaOptions): Keda {
  const client = scalerClient(opts.scalerPort);
  const ac = new AbortController();
  const spans: WorkerSpan[] = [];
  let current: WorkerSpan | undefined;
  const isActive = (): Promise<boolean> =>
    new Promise((resolve, reject) => client.IsActive(SCALED_OBJECT, (err, res) => (err ? reject(err) : resolve(res.result))));
  const scaleDown = async (): Promise<void> => {
    const span = current;
    if (!span) return;
    current = undefined;
    await span.proc.stop();
    span.stoppedAt = Date.now();
  };
  const loop = async (): Promise<void> => {
    let lastActive = 0;
    while (!ac.signal.aborted) {
      // A scaler that does not answer counts as active, as KEDA's fallback keeps replicas up.
      const active = await isActive().catch(() => true);
      const now = Date.now();
      if (active) lastActive = now;
      if (current && !current.proc.running()) {
        // The worker exited by itself (a crash): KEDA's Deployment would start a new one.
        current.stoppedAt = now;
        current = undefined;
      }
      if (active && !current) {
        current = { proc: opts.startWorker(`worker-${spans.length}`), startedAt: now, stoppedAt: undefined };
        spans.push(current);
      } else if (!active && current && now - lastActive >= opts.cooldownMs) {
        await scaleDown();
      }
      await sleep(opts.pollMs, ac.signal).catch(() => undefined);
    }
  };
  const running = loop();
  return {
    spans,
    stop: async () => {
      ac.abort();
      await running;
      await scaleDown();
      client.close();
    },
  };
}

type Span = Pick<WorkerSpan, 'startedAt' | 'stoppedAt'>;

/** The spans clipped to [from, to], in start order (a running span lasts until `to`). */
function clipped(spans: readonly Span[], from: number, to: number): (readonly [number, number])[] {
  return spans
    .map((s) => [Math.max(from, s.startedAt), Math.min(to, s.stoppedAt ?? to)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
}

/** How long, within [from, to], at least one span was running. */
export function busyMs(spans: readonly Span[], from: number, to: number): number {
  let total = 0;
  let cursor = from;
  for (const [a, b] of clipped(spans, from, to)) {
    total += Math.max(0, b - Math.max(a, cursor));
    cursor = Math.max(cursor, b);
  }
  return total;
}

/** The longest stretch of [from, to] during which no span was running. */
export function longestIdle(spans: readonly Span[], from: number, to: number): number {
  const busy = clipped(spans, from, to);
  let longest = 0;
  let cursor = from;
  for (const [a, b] of busy) {
    longest = Math.max(longest, a - cursor);
    cursor = Math.max(cursor, b);
  }
  return Math.max(longest, to - cursor);
}
