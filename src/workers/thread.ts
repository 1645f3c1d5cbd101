/**
 * The reconcile worker as a thread of the watcher's process (`EBB_WATCHER_WORKER_THREAD`): the worker of
 * `ebb worker` (its settings, read from the environment the watcher hands the thread, its reconcilers and its
 * shell), without an endpoint of its own: the watcher serves the thread's probes and metrics, asking over the
 * thread's port (`thread-protocol.ts`), and tells it to stop. Anything the thread does not catch, its heap limit
 * included, ends the thread alone; the watcher starts it again (`src/watcher/worker-thread.ts`).
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { createLogger } from '../common/log.ts';
import { loadWorkerConfig } from './config.ts';
import { workerReconcilers, type WorkerReconcilers } from './reconcilers.ts';
import { startWorker } from './worker.ts';
import { isToThread, THREAD_METRIC_LABELS, type FromThread } from './thread-protocol.ts';

const send = (port: MessagePort, m: FromThread): void => port.postMessage(m);

/**
 * Runs the worker in this thread until the watcher says stop. `wrap` is a seam for tests (a reconciler that
 * allocates past the heap limit); the shipped entry (`thread-main.ts`) passes none.
 */
export async function runWorkerThread(wrap: (set: WorkerReconcilers) => WorkerReconcilers = (set) => set): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('runWorkerThread: not in a worker thread');
  const cfg = loadWorkerConfig();
  const log = createLogger('worker', cfg.logLevel).child(THREAD_METRIC_LABELS);
  const set = wrap(workerReconcilers(cfg));
  const worker = await startWorker(cfg, log, set.byKind, set.drain, { serveOps: false, metricLabels: { ...THREAD_METRIC_LABELS } });
  let stopping = false;
  port.on('message', (m: unknown) => {
    if (!isToThread(m)) return;
    if (m.type === 'stop') {
      if (stopping) return;
      stopping = true;
      void worker.stop().finally(() => {
        send(port, { type: 'stopped' });
        port.close();
      });
      return;
    }
    if (m.what === 'probes') send(port, { type: 'probes', id: m.id, probes: { readiness: worker.readiness(), health: worker.health() } });
    else
      void worker.metrics().then(
        (text) => send(port, { type: 'metrics', id: m.id, text }),
        () => send(port, { type: 'metrics', id: m.id, text: '' }),
      );
  });
  send(port, { type: 'started' });
}
