/**
 * `ebb worker` with the minimal App reconcile (read the App, write status.observedGeneration) instead of the
 * full one: the same worker shell, queue and config, so event-latency.ts can measure the watch → queue →
 * worker pipeline apart from the cost of the App reconcile. Configured by the same environment variables.
 */
import { createLogger } from '../src/common/log.ts';
import { loadWorkerConfig } from '../src/workers/config.ts';
import { observeGeneration } from '../harness/workers/observe-generation.ts';
import { startWorker } from '../src/workers/worker.ts';

const cfg = loadWorkerConfig();
const worker = await startWorker(cfg, createLogger('worker', cfg.logLevel), { App: observeGeneration });
await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
await worker.stop();
