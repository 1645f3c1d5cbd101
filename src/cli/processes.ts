import { createLogger } from '../common/log.ts';
import { loadWatcherConfig } from '../watcher/config.ts';
import { startWatcher } from '../watcher/watcher.ts';
import { loadWorkerConfig } from '../workers/config.ts';
import { startWorker } from '../workers/worker.ts';
import { reconcilers } from '../workers/reconcilers.ts';
import { untilSignal } from './sandbox.ts';

/** `ebb watcher`: runs until SIGINT/SIGTERM. */
export async function watcherCommand(): Promise<number> {
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
  const cfg = loadWorkerConfig();
  const log = createLogger('worker', cfg.logLevel);
  const worker = await startWorker(cfg, log, reconcilers());
  const sig = await untilSignal();
  log.info({ signal: sig }, 'shutting down');
  await worker.stop();
  return 0;
}
