/** A worker thread entry for worker-thread.test.ts: says it started, answers probes and metrics, stops when told. */
import { parentPort } from 'node:worker_threads';
import type { FromThread, ToThread } from '../../../../src/workers/thread-protocol.ts';

const port = parentPort;
if (!port) throw new Error('not a worker thread');
const send = (m: FromThread): void => port.postMessage(m);
const alive = setInterval(() => undefined, 1_000);
port.on('message', (m: ToThread) => {
  if (m.type === 'stop') {
    clearInterval(alive);
    send({ type: 'stopped' });
    return;
  }
  if (m.what === 'probes') send({ type: 'probes', id: m.id, probes: { readiness: undefined, health: undefined } });
  else send({ type: 'metrics', id: m.id, text: 'fake_reconciles_total{thread="watcher"} 7\n' });
});
send({ type: 'started' });
