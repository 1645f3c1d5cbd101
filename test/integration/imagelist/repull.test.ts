/**
 * The periodic re-pull of alwaysPull ImageList entries, with the real watcher and worker processes against the
 * sandbox. The daemon's part (answering a request with a pull) is played by this test through the status
 * subresource, so the worker's side is seen on its own:
 *  - the re-pull timer fires while no worker runs (it lives in the watcher) and leaves a reconcile job waiting;
 *  - a worker started then sets `pullRequestedAt` with its own field manager, once per due entry;
 *  - an answered request starts the next interval; an entry that stops being alwaysPull is released, and a
 *    person's own fields are never touched.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageListRef } from '../../../src/api/group.ts';
import type { ImageList } from '../../../src/api/image-list.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue, type ReconcileQueue } from '../../../src/queue/queues.ts';
import { sandbox } from '../support.ts';
import { ebbEnv, httpGet, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from '../watcher/helpers.ts';

const INTERVAL_S = 60;
const REPULL = 'r.example/base:stable';
const PERSON = 'r.example/tool:1';

describe('periodic re-pull of alwaysPull images', () => {
  const name = `repull-${randomBytes(3).toString('hex')}`;
  const procs: EbbProcess[] = [];
  let env: Record<string, string>;
  let conn: Redis;
  let reconcile: ReconcileQueue;

  const read = () => sandbox().rest.get<ImageList>(imageListRef(name));
  const entry = (list: ImageList, image: string) => list.spec?.images?.find((e) => e.image === image);
  /** Plays the daemon: reports `image` pulled `agoS` seconds ago, answering the current request if any. */
  const reportPulled = async (agoS: number) => {
    const list = await read();
    const requested = entry(list, REPULL)?.pullRequestedAt;
    const lastPullTime = new Date(Date.now() - agoS * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    const status = { images: [{ image: REPULL, phase: 'Pulled', lastPullTime, ...(requested ? { observedPullRequestedAt: requested } : {}) }] };
    await sandbox().rest.patch(imageListRef(name, 'status'), { status }, PatchType.merge);
  };
  const startWorker = async () => {
    const worker = spawnEbb('worker', { ...env, EBB_LOG_LEVEL: 'debug' }, `worker-${procs.length}`);
    procs.push(worker);
    await worker.httpPort();
    return worker;
  };

  beforeAll(async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    const prefix = uniquePrefix('repull');
    env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: ['default'] }, { EBB_RESYNC_PERIOD: '0' });
    conn = redisConnection(redisUrl, { forWorker: false });
    reconcile = createReconcileQueue(conn, parseQueueConfig({ EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix }));
    const watcher = spawnEbb('watcher', env);
    procs.push(watcher);
    const port = await watcher.httpPort();
    await waitFor(async () => ((await httpGet(port, '/readyz')).status === 200 ? true : undefined), { timeoutMs: 20_000, what: 'watcher ready' });
    const images = [
      { image: REPULL, alwaysPull: true, repullIntervalSeconds: INTERVAL_S },
      { image: PERSON, pullRequestedAt: '2026-01-01T00:00:00Z' },
    ];
    await rest.apply(imageListRef(name), { apiVersion: 'apps.ebb.dev/v1alpha1', kind: 'ImageList', metadata: { name }, spec: { images } }, 'person');
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await reconcile?.close();
    conn?.disconnect();
    await sandbox()
      .rest.delete(imageListRef(name))
      .catch(() => undefined);
  });

  it('fires at zero workers, requests a pull once per interval, and releases what it no longer needs', async () => {
    printLogsOnFailure(procs);
    // Pulled 50 s ago: the next pull falls due in about 10 s.
    await reportPulled(INTERVAL_S - 10);
    const first = await startWorker();
    await first.waitForLog((l) => l['kind'] === 'ImageList' && l.msg === 'reconcile finished', 30_000, 'an ImageList reconcile');
    await first.stop();
    expect(entry(await read(), REPULL)?.pullRequestedAt).toBeUndefined();

    // No worker runs: the timer, kept by the watcher, turns into a waiting reconcile job when due.
    await waitFor(
      async () => ((await reconcile.getJobs(['wait', 'prioritized'])).some((j) => j.data.kind === 'ImageList' && j.data.name === name) ? true : undefined),
      { timeoutMs: 30_000, what: 're-pull job enqueued by the timer' },
    );
    expect(entry(await read(), REPULL)?.pullRequestedAt).toBeUndefined();

    const worker = await startWorker();
    const firstRequest = await waitFor(async () => entry(await read(), REPULL)?.pullRequestedAt, { timeoutMs: 30_000, what: 'first pull request' });
    const list = await read();
    const managers = (list.metadata as { managedFields?: { manager?: string }[] }).managedFields?.map((m) => m.manager);
    expect(managers).toContain('ebb-repull');
    // The person's entry keeps its own request; the worker never writes entries that are not alwaysPull.
    expect(entry(list, PERSON)?.pullRequestedAt).toBe('2026-01-01T00:00:00Z');

    // The "daemon" answers the request; 4 s later the next interval is due and a second request follows.
    await reportPulled(INTERVAL_S - 4);
    const secondRequest = await waitFor(
      async () => {
        const at = entry(await read(), REPULL)?.pullRequestedAt;
        return at !== undefined && at !== firstRequest ? at : undefined;
      },
      { timeoutMs: 30_000, what: 'second pull request' },
    );
    expect(Date.parse(secondRequest)).toBeGreaterThan(Date.parse(firstRequest));
    // The log line follows the write; give it the moment it takes to arrive, then count exactly two.
    const requests = () => worker.logs.filter((l) => l.msg === 'periodic re-pull requested').length;
    await waitFor(() => (requests() >= 2 ? true : undefined), { timeoutMs: 5_000, what: 'second re-pull log line' });
    expect(requests()).toBe(2);

    // The person turns alwaysPull off: the worker releases its field, and no further request is made.
    await reportPulled(0);
    const images = [
      { image: REPULL, alwaysPull: false },
      { image: PERSON, pullRequestedAt: '2026-01-01T00:00:00Z' },
    ];
    await sandbox().rest.apply(imageListRef(name), { apiVersion: 'apps.ebb.dev/v1alpha1', kind: 'ImageList', metadata: { name }, spec: { images } }, 'person');
    await waitFor(async () => (entry(await read(), REPULL)?.pullRequestedAt === undefined ? true : undefined), { timeoutMs: 30_000, what: 'request released' });
    const after = await read();
    expect(entry(after, REPULL)?.alwaysPull).toBe(false);
    expect(entry(after, PERSON)?.pullRequestedAt).toBe('2026-01-01T00:00:00Z');
  });
});
