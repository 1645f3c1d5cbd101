/**
 * A watcher running alone (no worker, no resync) over one namespace, with a handle on its reconcile queue:
 * what the queue holds is exactly what the watcher enqueued.
 */
import type { Redis } from 'ioredis';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue, type ReconcileQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { ebbEnv, httpGet, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

export interface LoneWatcher {
  watcher: EbbProcess;
  reconcile: ReconcileQueue;
  /** The watcher's HTTP port (`/readyz`, `/metrics`). */
  port: number;
  /** Waiting reconcile jobs of the App `name`. */
  waiting(name: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startLoneWatcher(env: { kubeconfig: string; redisUrl: string }, ns: string, tag: string): Promise<LoneWatcher> {
  const prefix = uniquePrefix(tag);
  const conn: Redis = redisConnection(env.redisUrl, { forWorker: false });
  const reconcile = createReconcileQueue(conn, parseQueueConfig({ EBB_REDIS_URL: env.redisUrl, EBB_QUEUE_PREFIX: prefix }));
  const watcher = spawnEbb('watcher', ebbEnv({ ...env, prefix, namespaces: [ns] }, { EBB_RESYNC_PERIOD: '0' }));
  const port = await watcher.httpPort();
  await waitFor(async () => ((await httpGet(port, '/readyz')).status === 200 ? true : undefined), { timeoutMs: 20_000, what: 'watcher ready' });
  return {
    watcher,
    reconcile,
    port,
    waiting: async (name) => (await reconcile.getJobs(['wait', 'prioritized'])).filter((j) => j.data.name === name).length,
    stop: async () => {
      await watcher.stop();
      await reconcile.close();
      conn.disconnect();
    },
  };
}
