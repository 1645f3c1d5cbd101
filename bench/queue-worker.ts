/**
 * `ebb worker` whose App reconcile does nothing: the same worker shell as minimal-worker.ts (queue shards,
 * retry policy, quarantine bookkeeping, metrics), without the minimal reconcile's apiserver read and status
 * write, so queue-shards.ts measures what Redis can carry rather than what the apiserver can. It never calls the
 * apiserver; KUBECONFIG may name a server that does not exist. Configured by the worker's environment variables.
 */
import { createLogger } from '../src/common/log.ts';
import { loadWorkerConfig } from '../src/workers/config.ts';
import { startWorker } from '../src/workers/worker.ts';

const cfg = loadWorkerConfig();
const worker = await startWorker(cfg, createLogger('worker', cfg.logLevel), { App: () => Promise.resolve({}) });
await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
await worker.stop();
