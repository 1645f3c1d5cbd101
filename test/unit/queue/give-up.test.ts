/**
 * An object whose reconcile job used all its attempts on an error that may heal (the apiserver unreachable
 * longer than the retry budget) is reconciled again after the capped backoff, without a new watch event:
 * `startWorker` against a real Redis, with the timers worker the watcher runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import type { ObjectKey } from '../../../src/queue/names.ts';
import { timersWorkerOptions } from '../../../src/queue/queues.ts';
import { processTimer, type TimerData } from '../../../src/queue/timers.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { useRedis, writeUnusedKubeconfig } from './support.ts';

const redis = useRedis();
const key: ObjectKey = { kind: 'App', namespace: 'ns', name: 'web' };

describe('a job that gave up on an error that may heal', () => {
  let dir = '';
  let kubeconfig = '';
  let worker: RunningWorker | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-give-up-'));
    kubeconfig = join(dir, 'kubeconfig');
    // Never contacted: the reconcilers here are fakes.
    await writeUnusedKubeconfig(kubeconfig);
  });

  afterAll(async () => {
    await worker?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['503 apiserver unreachable', new KubeError('Unavailable', 0, 'GET /apis/x: apiserver unreachable (connect ECONNREFUSED)'), 3],
    ['403 Forbidden', new KubeError('Forbidden', 403, 'apps is forbidden'), 1],
  ])('%s: reconciled again after the backoff only when it may heal', async (_what, error, expectedCalls) => {
    const env = { EBB_QUEUE_ATTEMPTS: '2', EBB_QUEUE_BACKOFF_BASE: '20ms', EBB_QUEUE_BACKOFF_MAX: '50ms' };
    const cfg = redis.config(env);
    const queue = redis.reconcileQueue(cfg);
    const timers = redis.timersQueue(cfg);
    redis.worker<TimerData>(timers.name, (job) => processTimer(job, queue), timersWorkerOptions(redis.connection(true), cfg));
    let calls = 0;
    const app = (): Promise<Record<string, never>> => (++calls <= 2 ? Promise.reject(error) : Promise.resolve({}));
    const workerCfg = parseWorkerConfig({
      ...env,
      KUBECONFIG: kubeconfig,
      EBB_REDIS_URL: redis.url(),
      EBB_QUEUE_PREFIX: cfg.prefix,
      EBB_HTTP_PORT: '0',
      EBB_HTTP_ADDRESS: '127.0.0.1',
    });
    worker = await startWorker(workerCfg, createLogger('give-up', 'silent'), { App: app });
    await enqueue(queue, key);
    await waitFor(async () => ((await queue.getFailedCount()) >= 1 ? true : undefined), { timeoutMs: 5_000, what: 'the job to give up' });
    if (expectedCalls > 1) {
      await waitFor(async () => ((await queue.getCompletedCount()) >= 1 ? true : undefined), { timeoutMs: 5_000, what: 'the retry after giving up' });
    } else {
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(calls).toBe(expectedCalls);
    await worker.stop();
    worker = undefined;
  });
});
