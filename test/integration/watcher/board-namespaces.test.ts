/**
 * Bull Board for viewers limited to some namespaces, through a real `ebb watcher` whose board permission is
 * `get` on Apps cluster-wide: a ServiceAccount bound to it by a RoleBinding in namespace A only sees A's jobs and
 * never B's names, gets 404 for B's job (as for a job that does not exist) and 403 for a queue-wide action or a
 * change; one bound by a ClusterRoleBinding sees both namespaces' jobs; a user bound nowhere sees no job.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { createReconcileQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { boardViewer, serviceAccountToken } from './board-viewers.ts';
import { deleteNamespace, ebbEnv, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

const APP_RULE = { apiGroups: ['apps.ebb.dev'], resources: ['apps'], verbs: ['get', 'list', 'update'] };

interface QueuesBody {
  queues: { name: string; counts: Record<string, number>; jobs: { id: string }[] }[];
}

describe('Bull Board for a viewer limited to some namespaces', () => {
  const procs: EbbProcess[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it("shows A's viewer only A's jobs, 404 for B's, 403 for queue-wide actions; the cluster viewer sees both", async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    printLogsOnFailure(procs);
    const nsA = await freshNamespace('board-a');
    const nsB = await freshNamespace('board-b');
    cleanups.push(
      () => deleteNamespace(rest, nsA),
      () => deleteNamespace(rest, nsB),
    );
    const secretName = `b-secret-${randomBytes(3).toString('hex')}`;

    // A's viewer: get, list (and update) on Apps in A, by a RoleBinding there; the cluster viewer: the same, by a
    // ClusterRoleBinding.
    const viewer = await boardViewer(rest, { namespace: nsA, name: 'viewer', rules: [APP_RULE] }, cleanups);
    const operator = await boardViewer(rest, { namespace: nsA, name: 'operator', rules: [APP_RULE], clusterWide: true }, cleanups);
    const nobody = await serviceAccountToken(rest, nsA, 'nobody');

    const prefix = uniquePrefix('board-ns');
    const watcher = spawnEbb(
      'watcher',
      ebbEnv(
        { kubeconfig, redisUrl, prefix, namespaces: [nsA, nsB] },
        {
          EBB_BOARD: 'true',
          EBB_BOARD_READ_ONLY: 'false',
          EBB_HTTP_ADDRESS: '0.0.0.0',
          EBB_SCALER: 'false',
          EBB_BOARD_KUBE_AUTH_RESOURCE: 'apps.apps.ebb.dev',
        },
      ),
    );
    procs.push(watcher);
    const origin = `http://127.0.0.1:${await watcher.httpPort()}`;
    const board = `${origin}/board`;

    // One reconcile job for an App of each namespace; no worker runs, so both wait.
    const connection = redisConnection(redisUrl, { forWorker: false, name: 'board-ns-test' });
    const queue = createReconcileQueue(connection, parseQueueConfig({ EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix }));
    cleanups.push(async () => {
      await queue.close();
      connection.disconnect();
    });
    const { jobId: jobA } = await enqueue(queue, { kind: 'App', namespace: nsA, name: 'a-app' });
    const { jobId: jobB } = await enqueue(queue, { kind: 'App', namespace: nsB, name: secretName });

    const call = async (token: string, path: string, method = 'GET'): Promise<{ status: number; text: string }> => {
      const res = await fetch(`${board}${path}`, { method, headers: { authorization: `Bearer ${token}`, origin }, signal: AbortSignal.timeout(10_000) });
      return { status: res.status, text: await res.text() };
    };
    const listed = async (token: string): Promise<{ ids: string[]; text: string }> => {
      const { status, text } = await call(token, '/api/queues?activeQueue=reconcile&status=waiting&page=1&jobsPerPage=50');
      expect(status, text.slice(0, 300)).toBe(200);
      const body = JSON.parse(text) as QueuesBody;
      return { ids: body.queues.find((q) => q.name === 'reconcile')?.jobs.map((j) => j.id) ?? [], text };
    };
    const eventually = <T>(what: string, check: () => Promise<T | undefined>) => waitFor(check, { timeoutMs: 60_000, intervalMs: 250, what });

    // The cluster viewer sees both jobs (waits for the RoleBindings to take effect).
    const all = await eventually('the cluster viewer listing both jobs', async () => {
      const l = await listed(operator);
      return l.ids.includes(jobA) && l.ids.includes(jobB) ? l : undefined;
    });
    expect(all.text).toContain(secretName);
    expect((await call(operator, `/api/queues/reconcile/${jobB}`)).status).toBe(200);

    // A's viewer: A's job only, and no trace of B's.
    const mine = await eventually("A's viewer listing A's job", async () => {
      const l = await listed(viewer);
      return l.ids.includes(jobA) ? l : undefined;
    });
    expect(mine.ids).toEqual([jobA]);
    expect(mine.text).not.toContain(secretName);
    expect(mine.text).not.toContain(nsB);
    const detail = await call(viewer, `/api/queues/reconcile/${jobA}`);
    expect(detail.status).toBe(200);
    expect(JSON.parse(detail.text)).toMatchObject({ job: { id: jobA, data: { namespace: nsA, name: 'a-app' } }, status: 'waiting' });
    expect((await call(viewer, `/api/queues/reconcile/${jobA}/logs`)).status).toBe(200);

    // B's job is not found, as one that does not exist; its logs and changes to it too.
    const notFound = await call(viewer, `/api/queues/reconcile/${jobB}`);
    expect(notFound).toEqual(await call(viewer, `/api/queues/reconcile/App.${nsB}.nothing.0123456789ab`));
    expect(notFound.status).toBe(404);
    expect(notFound.text).not.toContain(secretName);
    expect((await call(viewer, `/api/queues/reconcile/${jobB}/logs`)).status).toBe(404);
    expect((await call(viewer, `/api/queues/reconcile/${jobB}/retry`, 'PUT')).status).toBe(404);

    // Queue-wide actions need the board's permission in every namespace; a limited viewer changes no job.
    for (const path of [
      '/api/queues/reconcile/clean/waiting',
      '/api/queues/reconcile/pause',
      '/api/queues/reconcile/retry/failed',
      '/api/queues/reconcile/empty',
    ]) {
      const refused = await call(viewer, path, 'PUT');
      expect(refused.status, path).toBe(403);
    }
    expect((await call(viewer, `/api/queues/reconcile/${jobA}/clean`, 'PUT')).status).toBe(403);
    expect(await queue.getJobState(jobA)).toBe('waiting');
    expect(await queue.getJobState(jobB)).toBe('waiting');
    expect((await call(viewer, '/api/job-schedulers')).status).toBe(403);

    // A user bound nowhere sees the queues' numbers and no job.
    const none = await listed(nobody);
    expect(none.ids).toEqual([]);
    expect(none.text).not.toContain(secretName);
    expect((await call(nobody, `/api/queues/reconcile/${jobA}`)).status).toBe(404);

    // The cluster viewer may act on the whole queue.
    expect((await call(operator, '/api/queues/reconcile/clean/completed', 'PUT')).status).toBe(200);
  });
});
