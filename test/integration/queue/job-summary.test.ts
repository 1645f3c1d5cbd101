/**
 * Every reconcile says what it did: with the real watcher and worker, the first reconcile of an App of one
 * replica is a completed job whose return value in Redis is the summary (the pod and revision created, the
 * revision pair, the App's generation) and whose job log names the pod it created, as Bull Board shows them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { appManifest, deleteNamespace, ebbEnv, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from '../watcher/helpers.ts';

interface Summary {
  result: string;
  generation?: number;
  revisions?: { current?: string; update?: string };
  actions?: Record<string, number>;
}

describe('a reconcile job in Redis', () => {
  let ns = '';
  const procs: EbbProcess[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    ns = await freshNamespace('jobsum');
  });

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await Promise.all(procs.map((p) => p.stop()));
    await deleteNamespace(sandbox().rest, ns);
  });

  it('returns the summary of what it did and logs one line per phase that acted', async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    printLogsOnFailure(procs);
    const prefix = uniquePrefix('jobsum');
    const env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [ns] });
    const watcher = spawnEbb('watcher', env);
    const worker = spawnEbb('worker', env);
    procs.push(watcher, worker);
    await Promise.all([watcher.httpPort(), worker.httpPort()]);

    const connection = redisConnection(redisUrl, { forWorker: false, name: 'job-summary-test' });
    const queue = createReconcileQueue(connection, parseQueueConfig({ EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix }));
    cleanups.push(async () => {
      await queue.close();
      connection.disconnect();
    });

    const manifest = appManifest('sum');
    await rest.create(appRef(ns), { ...manifest, spec: { ...(manifest['spec'] as object), replicas: 1 } });

    // The reconcile that created the pod: found by its return value, as Bull Board reads it.
    const job = await waitFor(
      async () => {
        const completed = await queue.getJobs(['completed']);
        return completed.find((j) => (j.returnvalue as unknown as Summary | null)?.actions?.['createPod'] === 1);
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'a completed reconcile job that created a pod' },
    );
    const summary = job.returnvalue as unknown as Summary;
    expect(job.data).toEqual({ kind: 'App', namespace: ns, name: 'sum' });
    expect(summary.result).toMatch(/^(done|wait)$/);
    expect(summary.generation).toBe(1);
    expect(summary.revisions?.update).toMatch(/^sum-/);
    expect(summary.revisions?.current).toBe(summary.revisions?.update);
    expect(JSON.stringify(summary).length).toBeLessThan(2_000);

    const { logs, count } = await queue.getJobLogs(job.id ?? '');
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(12);
    expect(logs).toContain('pods: createPod 1 (sum-0)');
    if (summary.actions?.['createRevision']) expect(logs.some((l) => l.startsWith('revisions: createRevision 1 (sum-'))).toBe(true);
  });
});
