/**
 * `startWorker` against a real Redis: jobs that ebb did not make (an id of another form, or a payload that
 * names another object than the id) are dropped without a reconcile and without a retry; and /healthz fails
 * once Redis has been out of reach for EBB_REDIS_UNHEALTHY_AFTER, and recovers when Redis answers again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from '../../../harness/sandbox/redis.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { ownJobKey, reconcileJobId } from '../../../src/queue/job-id.ts';
import type { ObjectKey } from '../../../src/queue/names.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { useRedis, writeUnusedKubeconfig } from './support.ts';

const redis = useRedis();
const key: ObjectKey = { kind: 'App', namespace: 'ns', name: 'web' };

describe('ownJobKey', () => {
  it("accepts only ebb's id form with a payload naming the same object", () => {
    expect(ownJobKey(reconcileJobId(key), key)).toEqual(key);
    expect(ownJobKey('App.ns.web.0123456789ab', { ...key, extra: 1 })).toEqual(key);
    expect(ownJobKey('evil', key)).toBeUndefined();
    expect(ownJobKey('App.ns.web', key)).toBeUndefined();
    expect(ownJobKey('App.ns.web.0123456789ab', { ...key, namespace: 'other' })).toBeUndefined();
    expect(ownJobKey('App.ns.web.0123456789ab', { kind: 'Secret', namespace: 'ns', name: 'web' })).toBeUndefined();
    expect(ownJobKey('App.NS.web.0123456789ab', key)).toBeUndefined();
    expect(ownJobKey(undefined, key)).toBeUndefined();
    expect(ownJobKey('App.ns.web.0123456789ab', null)).toBeUndefined();
  });
});

describe('the worker', () => {
  let dir = '';
  let kubeconfig = '';
  let worker: RunningWorker | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-worker-guards-'));
    kubeconfig = join(dir, 'kubeconfig');
    // Never contacted: the reconcilers here are fakes.
    await writeUnusedKubeconfig(kubeconfig);
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const env = (url: string, prefix: string, extra: Record<string, string> = {}): Record<string, string> => ({
    KUBECONFIG: kubeconfig,
    EBB_REDIS_URL: url,
    EBB_QUEUE_PREFIX: prefix,
    EBB_HTTP_PORT: '0',
    EBB_HTTP_ADDRESS: '127.0.0.1',
    ...extra,
  });

  it("drops jobs whose id is not ebb's own form, without reconciling or retrying them", async () => {
    const cfg = redis.config();
    const queue = redis.reconcileQueue(cfg);
    const reconciled: ObjectKey[] = [];
    const app = (k: ObjectKey): Promise<Record<string, never>> => {
      reconciled.push(k);
      return Promise.resolve({});
    };
    worker = await startWorker(parseWorkerConfig(env(redis.url(), cfg.prefix)), createLogger('guards', 'silent'), { App: app });
    await queue.add('App', key, { jobId: 'evil' });
    await queue.add('App', { kind: 'App', namespace: 'other', name: 'x' }, { jobId: 'App.ns.web.0123456789ab' });
    await enqueue(queue, key);
    await waitFor(async () => ((await queue.getCompletedCount()) >= 3 ? true : undefined), { timeoutMs: 10_000, what: 'three jobs done' });
    expect(reconciled).toEqual([key]);
    for (const id of ['evil', 'App.ns.web.0123456789ab']) expect((await queue.getJob(id))?.returnvalue).toMatchObject({ result: 'dropped' });
    expect(await queue.getFailedCount()).toBe(0);
  });

  it('fails /healthz once Redis has been out of reach for EBB_REDIS_UNHEALTHY_AFTER, and recovers with it', async () => {
    let server = await startRedis({ dir });
    try {
      const cfg = parseWorkerConfig(env(server.url, '{guards}', { EBB_REDIS_UNHEALTHY_AFTER: '1s', EBB_SHUTDOWN_TIMEOUT: '1s' }));
      worker = await startWorker(cfg, createLogger('guards', 'silent'), {});
      const healthz = async (): Promise<{ status: number; text: string }> => {
        const res = await fetch(`http://127.0.0.1:${worker?.httpPort ?? 0}/healthz`);
        return { status: res.status, text: await res.text() };
      };
      await waitFor(async () => ((await healthz()).status === 200 ? true : undefined), { timeoutMs: 5_000, what: 'healthy' });
      const port = server.port;
      await server.stop();
      const down = await waitFor(
        async () => {
          const h = await healthz();
          return h.status === 503 ? h : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 100, what: '/healthz failing' },
      );
      expect(down.text).toMatch(/redis unreachable for \ds/);
      server = await startRedis({ dir, port });
      await waitFor(async () => ((await healthz()).status === 200 ? true : undefined), { timeoutMs: 15_000, intervalMs: 100, what: 'healthy again' });
    } finally {
      // BullMQ's Worker.close(), forced or not, may never return after Redis came back (a blocking read
      // re-sent on reconnect that never settles); `ebb worker` bounds its stop with an exit deadline, and so
      // does this test: it is not about stopping.
      const stopping = worker?.stop();
      worker = undefined;
      await Promise.race([stopping, new Promise((r) => setTimeout(r, 5_000).unref())]);
      await server.stop();
    }
  }, 60_000);
});
