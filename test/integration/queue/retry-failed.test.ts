/**
 * `ebb queue status` and `retry-failed` with the real watcher and worker: the worker reaches the apiserver
 * through a proxy that resets every connection, so with one attempt per job both Apps' reconciles fail; status
 * lists them with their error; once the apiserver is reachable again, retry-failed reconciles both. Bad
 * arguments, bad settings and an unreachable Redis end the CLI with a clear message and exit codes 2, 1 and 1.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  createApps,
  deleteNamespace,
  ebbEnv,
  kubeconfigServer,
  printLogsOnFailure,
  proxiedKubeconfig,
  spawnEbb,
  startTcpProxy,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
  type TcpProxy,
} from '../watcher/helpers.ts';
import { ebbQueue, ebbQueueOk, queueEnv, queueStatus } from './helpers.ts';

describe('ebb queue status / retry-failed', () => {
  let ns = '';
  let proxy: TcpProxy | undefined;
  const procs: EbbProcess[] = [];

  beforeAll(async () => {
    ns = await freshNamespace('qretry');
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await proxy?.stop();
    await deleteNamespace(sandbox().rest, ns);
  });

  it('lists failed reconciles with their last error and retries them once the cause is gone', async () => {
    const { rest, kubeconfig, redisUrl, dir } = sandbox();
    printLogsOnFailure(procs);
    const prefix = uniquePrefix('qretry');
    // One attempt, and a backoff longer than the test: a job that gives up on an error that heals comes back by
    // itself after the backoff (the give-up timer), so only `retry-failed` can bring these back in time.
    const attempts = { EBB_QUEUE_ATTEMPTS: '1', EBB_QUEUE_BACKOFF_BASE: '10m', EBB_QUEUE_BACKOFF_MAX: '10m' };
    const env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [ns] }, { EBB_RESYNC_PERIOD: '0', ...attempts });
    const cli = queueEnv(redisUrl, prefix, attempts);
    const apiserver = await kubeconfigServer(kubeconfig);
    proxy = await startTcpProxy(undefined);
    const cutOff = await proxiedKubeconfig(kubeconfig, join(dir, `${ns}-proxy.kubeconfig`), proxy.port);
    const watcher = spawnEbb('watcher', env);
    const worker = spawnEbb('worker', { ...env, KUBECONFIG: cutOff });
    procs.push(watcher, worker);
    await Promise.all([watcher.httpPort(), worker.httpPort()]);
    await createApps(rest, ns, ['web', 'api']);

    await waitFor(async () => ((await queueStatus(cli)).queues[0]?.counts.failed === 2 ? true : undefined), {
      timeoutMs: 90_000,
      what: 'two failed reconciles',
    });
    const text = await ebbQueueOk(['status'], cli);
    expect(text).toMatch(/^QUEUE\s+STATE\s+WAIT\s+PRIORITIZED\s+ACTIVE\s+DELAYED\s+FAILED\s+COMPLETED\s+WORKERS\s+OLDEST WAITING$/m);
    expect(text).toMatch(/^reconcile\s+running\s+0\s+0\s+0\s+0\s+2\s+\d+\s+\d+\s+-$/m);
    expect(text).toMatch(/^timers\s+running\s/m);
    expect(text).toContain('failed reconcile jobs (2 of 2, newest first):');
    for (const name of ['web', 'api'])
      expect(text).toMatch(new RegExp(`^  App ${ns}/${name}  job App\\.${ns}\\.${name}\\.\\w+, 1 attempt, \\d+s ago: GET .*: apiserver unreachable`, 'm'));
    expect(await ebbQueueOk(['status', '--failed', '1'], cli)).toContain('failed reconcile jobs (1 of 2, newest first):');

    proxy.setTarget(apiserver);
    expect(await ebbQueueOk(['retry-failed'], cli)).toBe('2 failed jobs: 2 reconciles enqueued, 0 merged into pending jobs\n');
    await waitAllObserved(rest, ns, 2);
    const after = await queueStatus(cli);
    expect(after.queues[0]?.counts.failed).toBe(0);
    expect(after.queues[0]?.failed).toEqual([]);
    expect(await ebbQueueOk(['retry-failed'], cli)).toBe('no failed jobs\n');
  });

  it('refuses bad arguments with the usage (exit 2), bad settings with one configuration error and an unreachable Redis by name (exit 1)', async () => {
    const { redisUrl } = sandbox();
    const cli = queueEnv(redisUrl, uniquePrefix('qargs'));
    const bad = await ebbQueue(['concurrency', '0'], cli);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ebb queue: concurrency must be a whole number from 1 to 100000, got "0"');
    expect(bad.stderr).toContain('ebb queue rate-limit N/DURATION');
    expect((await ebbQueue([], cli)).code).toBe(2);
    const help = await ebbQueue(['help'], cli);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('ebb queue retry-failed');

    const config = await ebbQueue(['status'], { EBB_REDIS_URL: 'http://redis:6379', EBB_QUEUE_PREFIX: 'no-tag', EBB_QUEUE_ATTEMPTS: 'many' });
    expect(config.code).toBe(1);
    expect(config.stderr).toMatch(/^ebb queue: invalid configuration:\n/);
    for (const setting of ['EBB_REDIS_URL', 'EBB_QUEUE_PREFIX', 'EBB_QUEUE_ATTEMPTS']) expect(config.stderr).toContain(setting);

    const down = await ebbQueue(['status'], { EBB_REDIS_URL: 'redis://ops:s3cret@127.0.0.1:1' });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('ebb queue: cannot reach Redis at redis://ops@127.0.0.1:1 (EBB_REDIS_URL)');
    expect(down.stderr).not.toContain('s3cret');
  });
});
