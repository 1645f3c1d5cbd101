/** The entry of the watcher's worker thread (`EBB_WATCHER_WORKER_THREAD`): the worker of `thread.ts`, as shipped. */
import { runWorkerThread } from './thread.ts';

await runWorkerThread();
