import { createLogger } from '../common/log.ts';
import { logCrashes, stopWithin, untilSignal, WATCHER_STOP_DEADLINE_MS, WORKER_STOP_MARGIN_MS } from './signals.ts';

/** The daemon cancels its pulls at once; this bounds the final status write and the runtime's goodbye. */
const DAEMON_STOP_DEADLINE_MS = 20_000;

// Each command imports what it runs only when it runs, so `ebb watcher` never loads the worker's
// reconcilers and `ebb worker` never loads the watcher.

/** `ebb watcher`: runs until SIGINT/SIGTERM. */
export async function watcherCommand(): Promise<number> {
  const { loadWatcherConfig } = await import('../watcher/config.ts');
  const { startWatcher } = await import('../watcher/watcher.ts');
  const cfg = loadWatcherConfig();
  const log = createLogger('watcher', cfg.logLevel);
  logCrashes(log);
  const watcher = await startWatcher(cfg, log);
  const sig = await untilSignal();
  log.info({ signal: sig }, 'shutting down');
  return stopWithin(() => watcher.stop(), WATCHER_STOP_DEADLINE_MS + watcher.workerThreadStopMs, log);
}

/** `ebb worker`: runs until SIGINT/SIGTERM, then finishes running reconciles (bounded) and exits. */
export async function workerCommand(): Promise<number> {
  const { loadWorkerConfig } = await import('../workers/config.ts');
  const { startWorker } = await import('../workers/worker.ts');
  const { workerReconcilers } = await import('../workers/reconcilers.ts');
  const cfg = loadWorkerConfig();
  const log = createLogger('worker', cfg.logLevel);
  logCrashes(log);
  const set = workerReconcilers(cfg);
  const worker = await startWorker(cfg, log, set.byKind, set.drain);
  const sig = await untilSignal();
  log.info({ signal: sig }, 'shutting down');
  return stopWithin(() => worker.stop(), cfg.shutdownTimeoutMs + WORKER_STOP_MARGIN_MS, log);
}

/** `ebb daemon`: pulls the images of its node's ImageList until SIGINT/SIGTERM. */
export async function daemonCommand(): Promise<number> {
  const { loadDaemonConfig } = await import('../daemon/config.ts');
  const { daemonOptionsOf } = await import('../daemon/options.ts');
  const { startDaemon } = await import('../daemon/daemon.ts');
  const { criImageRuntime } = await import('../daemon/cri-adapter.ts');
  const { kubeClient } = await import('../kube/client.ts');
  const cfg = loadDaemonConfig();
  const opts = daemonOptionsOf(cfg);
  const log = createLogger('daemon', cfg.logLevel);
  logCrashes(log);
  const rest = await kubeClient(cfg.kube);
  const runtime = criImageRuntime(opts.criEndpoint, { pullTimeoutMs: opts.pullTimeoutMs });
  const daemon = await startDaemon(opts, { rest, runtime, log });
  const sig = await untilSignal();
  log.info({ signal: sig }, 'shutting down');
  return stopWithin(
    async () => {
      await daemon.stop();
      runtime.close();
    },
    DAEMON_STOP_DEADLINE_MS,
    log,
  );
}
