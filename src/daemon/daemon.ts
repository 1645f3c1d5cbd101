/**
 * The node daemon: watches its node's ImageList, pulls the listed images through the container runtime,
 * reports per-image status, and serves /healthz, /readyz and /metrics. It never exits on apiserver, runtime
 * or registry errors: each is retried with backoff and shows in the status, the log and /readyz.
 */
import { imageListRef } from '../api/group.ts';
import type { ImageList } from '../api/image-list.ts';
import type { Gauge } from 'prom-client';
import { sleep } from '../common/wait.ts';
import { startOpsServer } from '../common/http.ts';
import { repeatGate, type Logger } from '../common/log.ts';
import { PatchType, type KubeRest } from '../kube/rest.ts';
import { daemonMetrics } from './metrics.ts';
import type { DaemonOptions } from './options.ts';
import type { ImageRuntime } from './runtime.ts';
import { ImageScheduler } from './scheduler.ts';
import { copySecretReader, pullAuthFrom, type SecretReader } from './secrets.ts';
import { watchOwnImageList, type SourceState } from './source.ts';
import { StatusWriter, type StatusApi } from './status.ts';
import { ImageFsMonitor, type Statfs } from './image-fs.ts';
import { errorMessage } from '../common/errors.ts';

export const FIELD_MANAGER = 'ebb-daemon';
/** The runtime is asked for its version this often, and sooner again after it did not answer. */
const VERSION_PROBE_MS = 15_000;
const VERSION_RETRY_MS = 2_000;
const VERSION_TIMEOUT_MS = 10_000;
/** /readyz fails when the last answer is older than this (a probe loop that hangs). */
const VERSION_FRESH_MS = 60_000;
/** The final status write at shutdown gets this long. */
const FINAL_WRITE_MS = 10_000;

export interface DaemonDeps {
  rest: KubeRest;
  runtime: ImageRuntime;
  log: Logger;
  /** Reads pull Secrets; defaults to the apiserver. */
  secrets?: SecretReader;
  /** The capacity of a filesystem by a path on it; defaults to statfs(2). */
  statfs?: Statfs;
}

export interface RunningDaemon {
  httpPort: number;
  /** Why the daemon is not ready, or undefined when it is (what /readyz answers). */
  notReady(): string | undefined;
  /** Status writes sent so far. */
  statusWrites(): number;
  stop(): Promise<void>;
}

function statusApi(rest: KubeRest, nodeName: string): StatusApi {
  return {
    patchStatus: (patch, signal) => rest.patch<ImageList>(imageListRef(nodeName, 'status'), patch, PatchType.merge, { fieldManager: FIELD_MANAGER }, signal),
    get: (signal) => rest.get<ImageList>(imageListRef(nodeName), signal),
  };
}

/** What the last CRI Version call said. */
export interface RuntimeHealth {
  /** When the runtime last answered (ms since the epoch). */
  answeredAt: number | undefined;
  /** Why the last call failed; undefined when it answered. */
  failure: string | undefined;
}

/** Why the runtime makes the daemon not ready, or undefined when it answered its last Version call, recently. */
export function runtimeProblem(h: RuntimeHealth, now: number): string | undefined {
  if (h.failure !== undefined) return `container runtime does not answer: ${h.failure}`;
  if (h.answeredAt === undefined) return 'container runtime has not answered yet';
  if (now - h.answeredAt > VERSION_FRESH_MS) return 'container runtime has not answered recently';
  return undefined;
}

/** Asks the runtime for its version until `signal` aborts; `health` and the gauge say how the last call went. */
async function probeRuntime(runtime: ImageRuntime, deps: { log: Logger; up: Gauge; health: RuntimeHealth }, signal: AbortSignal): Promise<void> {
  const { log, up, health } = deps;
  const gate = repeatGate();
  while (!signal.aborted) {
    try {
      const v = await runtime.version(AbortSignal.any([signal, AbortSignal.timeout(VERSION_TIMEOUT_MS)]));
      // Said once when it starts answering (or answers again), not on every probe.
      if (health.answeredAt === undefined || health.failure !== undefined) {
        log.info({ runtime: v.runtimeName, version: v.runtimeVersion }, 'container runtime answers');
        gate.reset();
      }
      health.answeredAt = Date.now();
      health.failure = undefined;
      up.set(1);
    } catch (err) {
      if (signal.aborted) break;
      const message = errorMessage(err);
      health.failure = message;
      up.set(0);
      const held = gate.pass(message);
      if (held !== undefined) log.warn({ err: message, ...(held > 0 ? { suppressed: held } : {}) }, 'container runtime does not answer');
    }
    await sleep(health.failure === undefined ? VERSION_PROBE_MS : VERSION_RETRY_MS, signal).catch(() => undefined);
  }
}

export async function startDaemon(opts: DaemonOptions, deps: DaemonDeps): Promise<RunningDaemon> {
  const { rest, runtime, log } = deps;
  const ac = new AbortController();
  const metrics = daemonMetrics();
  const readSecret = deps.secrets ?? copySecretReader(rest, opts.pullSecretNamespace, opts.nodeName);
  const status = new StatusWriter({
    api: statusApi(rest, opts.nodeName),
    desired: () => scheduler.snapshot(),
    flushMs: opts.statusFlushMs,
    log,
    onWrite: (result) => metrics.statusWrites.inc({ result }),
  });
  const scheduler = new ImageScheduler({
    runtime,
    credentials: (entry, ref, signal) => (entry.pullSecret ? pullAuthFrom(readSecret, entry.pullSecret, ref, signal) : Promise.resolve(undefined)),
    options: opts,
    onChange: () => status.markDirty(),
    metrics,
    log,
    disk: {
      monitor: new ImageFsMonitor({ runtime, log, gauge: metrics.imageFsUsedPercent, statfs: deps.statfs }),
      highPercent: opts.imageFsHighPercent,
    },
  });

  let watchState: SourceState = 'starting';
  const health: RuntimeHealth = { answeredAt: undefined, failure: undefined };
  const notReady = (): string | undefined => {
    const problems: string[] = [];
    if (watchState !== 'watching') problems.push(`ImageList watch not established (${watchState})`);
    const runtimeIssue = runtimeProblem(health, Date.now());
    if (runtimeIssue) problems.push(runtimeIssue);
    return problems.join('; ') || undefined;
  };
  // Serving first: a port in use fails the start before any loop runs.
  const ops = await startOpsServer({
    address: opts.httpAddress,
    port: opts.httpPort,
    registry: metrics.registry,
    healthz: () => undefined,
    readyz: notReady,
    log: deps.log,
  });

  const watchLoop = watchOwnImageList(
    { rest, nodeName: opts.nodeName, watchdogMs: opts.watchdogMs, log, signal: ac.signal },
    {
      onState: (s) => (watchState = s),
      onEvent: (type) => metrics.watchEvents.inc({ type }),
      onObject: (obj) => {
        status.observe(obj);
        scheduler.setTarget({ uid: obj.metadata.uid ?? '', generation: obj.metadata.generation }, obj.spec?.images ?? [], obj.status?.images ?? []);
      },
      onAbsent: () => {
        status.observe(undefined);
        scheduler.clear();
      },
    },
  ).catch(() => undefined);
  const schedulerLoop = scheduler.run(ac.signal);
  const probeLoop = probeRuntime(runtime, { log, up: metrics.runtimeUp, health }, ac.signal);

  log.info(
    { node: opts.nodeName, port: ops.port, cri: opts.criEndpoint, pullConcurrency: opts.pullConcurrency, imageFsHighPercent: opts.imageFsHighPercent },
    'daemon started',
  );

  let stopping: Promise<void> | undefined;
  return {
    httpPort: ops.port,
    notReady,
    statusWrites: () => status.writes,
    stop: () =>
      (stopping ??= (async () => {
        ac.abort();
        await Promise.all([watchLoop, schedulerLoop, probeLoop, scheduler.stop()]);
        await status.close(AbortSignal.timeout(FINAL_WRITE_MS));
        await ops.close();
        log.info({ statusWrites: status.writes }, 'daemon stopped');
      })()),
  };
}
