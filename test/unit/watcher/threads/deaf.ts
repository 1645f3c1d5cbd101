/** A worker thread entry for worker-thread.test.ts: says it started, then never answers and never stops by itself. */
import { parentPort } from 'node:worker_threads';
import type { FromThread } from '../../../../src/workers/thread-protocol.ts';

setInterval(() => undefined, 1_000);
parentPort?.postMessage({ type: 'started' } satisfies FromThread);
