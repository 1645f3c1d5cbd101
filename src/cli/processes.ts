import { createLogger } from '../common/log.ts';
import { untilSignal } from './signals.ts';

// Each command imports what it runs only when it runs, so `ebb watcher` never loads the worker's
// reconcilers and `ebb worker` never loads the watcher.

/** `ebb watcher`: runs until SIGINT/SIGTERM. */
export async function watcherCommand(): Promise<number> {
  const { loadWatcherConfig } = await import('../watcher/config.ts');
  const { startWatcher } = await import('../watcher/watcher.ts');
  const cfg = loadWatcherConfig();
  const log = createLogger('watcher', cfg.logLevel);
  const watcher = await startWatcher(cfg, log);
  const sig = await untilSignal();
  log.info({ signal: sig }, 'shutting down');
  await watcher.stop();
  return 0;
}

/** `ebb worker`: runs until SIGINT/SIGTERM, then finishes running reconciles (bounded) and exits. */
export async function workerCommand(): Promise<number> {
  const { loadWorkerConfig } = await import('../workers/config.ts');
  const { startWorker } = await import('../workers/worker.ts');
  const { reconcilers } = await import('../workers/reconcilers.ts');
  const cfg = loadWorkerConfig();
  const log = createLogger('worker', cfg.logLevel);
  const worker = await startWorker(cfg, log, reconcilers());
  const sig = await untilSignal();
  log.info({ signal: sig }, 'shutting down');
  await worker.stop();
  return 0;
}
