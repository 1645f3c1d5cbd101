/**
 * Tenant fairness end to end, with the real `ebb watcher` and `ebb worker` processes: namespace A holds 150
 * Apps that the watcher's initial list enqueues at once, namespace B one App. With EBB_QUEUE_FAIRNESS at its
 * default (`namespace`) A's enqueues beyond the burst of 64 wait in BullMQ's prioritized set while B's job
 * waits in the wait list, so a worker runs B's reconcile after at most A's first 64; with `off` every job has
 * priority 0 (arrival order).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue, type ReconcileQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { appNames, createApps, deleteNamespace, ebbEnv, printLogsOnFailure, reconcileRuns, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

const FLOOD = 150;
const BURST = 64;

describe('tenant fairness (EBB_QUEUE_FAIRNESS)', () => {
  let nsA = '';
  let nsB = '';
  const procs: EbbProcess[] = [];
  const queues: ReconcileQueue[] = [];

  beforeAll(async () => {
    nsA = await freshNamespace('fair-a');
    nsB = await freshNamespace('fair-b');
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await Promise.all(queues.map((q) => q.close()));
    await Promise.all([deleteNamespace(sandbox().rest, nsA), deleteNamespace(sandbox().rest, nsB)]);
  });

  it("runs a quiet namespace's job before a flooding namespace's backlog; off keeps arrival order", async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    printLogsOnFailure(procs);
    await createApps(rest, nsA, appNames(FLOOD));
    await createApps(rest, nsB, ['web']);

    const queueOf = (prefix: string): ReconcileQueue => {
      const q = createReconcileQueue(redisConnection(redisUrl, { forWorker: false }), parseQueueConfig({ EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix }));
      queues.push(q);
      return q;
    };
    const common = { redisUrl, kubeconfig, namespaces: [nsA, nsB] };
    const fair = { ...common, prefix: uniquePrefix('fair') };
    const fifo = { ...common, prefix: uniquePrefix('fifo') };
    procs.push(
      spawnEbb('watcher', ebbEnv(fair, { EBB_RESYNC_PERIOD: '0' }), 'watcher-fair'),
      spawnEbb('watcher', ebbEnv(fifo, { EBB_RESYNC_PERIOD: '0', EBB_QUEUE_FAIRNESS: 'off' }), 'watcher-off'),
    );
    const [fairQueue, fifoQueue] = [queueOf(fair.prefix), queueOf(fifo.prefix)];
    const priorities = async (q: ReconcileQueue): Promise<Map<string, number>> => {
      const jobs = await q.getJobs(['wait', 'prioritized']);
      return new Map(jobs.map((j) => [`${j.data.namespace}/${j.data.name}`, j.priority]));
    };
    const all = (q: ReconcileQueue) => async () => {
      const p = await priorities(q);
      return p.size === FLOOD + 1 ? p : undefined;
    };
    const fairJobs = await waitFor(all(fairQueue), { timeoutMs: 30_000, intervalMs: 200, what: 'every App enqueued (fair)' });
    const fifoJobs = await waitFor(all(fifoQueue), { timeoutMs: 30_000, intervalMs: 200, what: 'every App enqueued (off)' });

    expect(fairJobs.get(`${nsB}/web`)).toBe(0);
    const aPriorities = [...fairJobs].filter(([k]) => k.startsWith(`${nsA}/`)).map(([, p]) => p);
    // The first BURST of the flood go at priority 0, and a few more when the recent count decays (half-life 10 s)
    // while the watcher enqueues the flood, which a loaded machine stretches; the rest wait in tiers.
    const zero = aPriorities.filter((p) => p === 0).length;
    expect(zero).toBeGreaterThanOrEqual(BURST);
    expect(zero).toBeLessThanOrEqual(BURST + 10);
    expect(aPriorities.filter((p) => p > 0)).toHaveLength(FLOOD - zero);
    expect(Math.max(...aPriorities)).toBe(2); // 150 = 64 · 2^1.2: tiers 1 and 2
    expect([...fifoJobs.values()].every((p) => p === 0)).toBe(true);

    const worker = spawnEbb('worker', ebbEnv(fair, { EBB_WORKER_CONCURRENCY: '1', EBB_LOG_LEVEL: 'debug' }), 'worker-fair');
    procs.push(worker);
    const runs = await waitFor(
      () => {
        const r = reconcileRuns(worker);
        return Promise.resolve(r.some((run) => run.namespace === nsB) ? r : undefined);
      },
      { timeoutMs: 60_000, intervalMs: 200, what: "B's reconcile" },
    );
    const aBefore = runs.filter((r) => r.namespace === nsA && r.startedAt <= (runs.find((x) => x.namespace === nsB)?.startedAt ?? 0));
    expect(aBefore.length).toBeLessThanOrEqual(BURST);
  });
});
