/**
 * `ebb queue pause|resume` with the real watcher and worker: while paused no reconcile starts, yet the watcher
 * records the change as a job (status shows it waiting, and its age); after resume the change is reconciled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  createApps,
  deleteNamespace,
  ebbEnv,
  editApp,
  listApps,
  printLogsOnFailure,
  spawnEbb,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
} from '../watcher/helpers.ts';
import { ebbQueueOk, queueEnv, queueStatus } from './helpers.ts';

describe('ebb queue pause / resume', () => {
  let ns = '';
  const procs: EbbProcess[] = [];

  beforeAll(async () => {
    ns = await freshNamespace('qpause');
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await deleteNamespace(sandbox().rest, ns);
  });

  it('starts no reconcile while paused, keeps the event as a job, and reconciles it after resume', async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    printLogsOnFailure(procs);
    const prefix = uniquePrefix('qpause');
    const env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [ns] }, { EBB_RESYNC_PERIOD: '0' });
    const cli = queueEnv(redisUrl, prefix);
    await createApps(rest, ns, ['web']);
    const watcher = spawnEbb('watcher', env);
    const worker = spawnEbb('worker', { ...env, EBB_LOG_LEVEL: 'debug' });
    procs.push(watcher, worker);
    await Promise.all([watcher.httpPort(), worker.httpPort()]);
    await waitAllObserved(rest, ns, 1);

    expect(await ebbQueueOk(['pause'], cli)).toContain('reconcile paused');
    const pausedAt = Date.now();
    const generation = await editApp(rest, ns, 'web');
    const status = await waitFor(
      async () => {
        const s = await queueStatus(cli);
        return s.queues[0]?.counts.wait === 1 ? s : undefined;
      },
      { timeoutMs: 15_000, what: 'the edit recorded as a waiting job' },
    );
    expect(status.queues[0]).toMatchObject({ name: 'reconcile', paused: true });
    await sleep(2_000);
    const text = await ebbQueueOk(['status'], cli);
    expect(text).toMatch(/^reconcile\s+paused\s+1\s+0\s+0\s+/m);
    expect(text).toMatch(/^reconcile\s.*\s[0-9]+s ago$/m);
    expect(text).toContain('reconcile is paused');
    const { apps } = await listApps(rest, ns);
    expect(apps[0]?.observedGeneration).toBeLessThan(generation);
    // The worker logs every start (it did before the pause), and none since.
    expect(worker.logs.some((l) => l.msg === 'reconcile started' && l.time < pausedAt)).toBe(true);
    expect(worker.logs.filter((l) => l.msg === 'reconcile started' && l.time > pausedAt)).toEqual([]);

    expect(await ebbQueueOk(['resume'], cli)).toContain('reconcile resumed');
    const [app] = await waitAllObserved(rest, ns, 1);
    expect(app?.observedGeneration).toBe(generation);
    expect((await queueStatus(cli)).queues[0]?.paused).toBe(false);
  });
});
