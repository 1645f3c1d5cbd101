/**
 * Bad input and unavailable dependencies at start, with the real `ebb watcher` / `ebb worker` processes:
 *  - an unparsable EBB_REDIS_URL or a broken kubeconfig: the process exits non-zero at once with a message
 *    that names the setting;
 *  - Redis down at start: the watcher keeps running, logs Redis connection errors, /readyz is 503 naming
 *    Redis, and turns 200 once Redis starts;
 *  - apiserver unreachable at start: the watcher logs `list/watch failed; retrying` with the error, /readyz is
 *    503, and it recovers once the apiserver is reachable (a TCP proxy that first refuses connections, then
 *    forwards them).
 * Never a silent exit.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { freePort } from '../../../harness/sandbox/ports.ts';
import { startRedis, type RedisServer } from '../../../harness/sandbox/redis.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  createApps,
  deleteNamespace,
  ebbEnv,
  httpGet,
  kubeconfigServer,
  printLogsOnFailure,
  proxiedKubeconfig,
  spawnEbb,
  startTcpProxy,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
  type TcpProxy,
} from './helpers.ts';

const COMMANDS = ['watcher', 'worker'] as const;

describe('bad input and dependencies down at start', () => {
  let dir = '';
  let ns = '';
  let redis: RedisServer | undefined;
  let proxy: TcpProxy | undefined;
  const procs: EbbProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-bad-input-'));
    ns = await freshNamespace('bad');
    await createApps(sandbox().rest, ns, ['web']);
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await proxy?.stop();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
    await deleteNamespace(sandbox().rest, ns);
  });

  const env = (over: Record<string, string> = {}, prefix = uniquePrefix('bad')): Record<string, string> =>
    ebbEnv({ kubeconfig: sandbox().kubeconfig, redisUrl: sandbox().redisUrl, prefix, namespaces: [ns] }, over);

  async function exitsWithMessage(command: (typeof COMMANDS)[number], over: Record<string, string>, setting: string): Promise<string> {
    const p = spawnEbb(command, env(over));
    procs.push(p);
    const timeout = setTimeout(() => void p.stop(), 20_000);
    const { code } = await p.exited;
    clearTimeout(timeout);
    expect(code, `${command} exit code`).not.toBe(0);
    expect(code, `${command} exited by itself`).not.toBeNull();
    expect(p.stderr(), `${command} names ${setting}`).toContain(setting);
    return p.stderr().trim();
  }

  it.each(COMMANDS)('%s: an unparsable EBB_REDIS_URL exits non-zero naming the setting', async (command) => {
    const message = await exitsWithMessage(command, { EBB_REDIS_URL: 'redis//127.0.0.1:6379' }, 'EBB_REDIS_URL');
    expect(message).toMatch(/not a URL/);
  });

  it.each(COMMANDS)('%s: a broken kubeconfig exits non-zero naming the setting', async (command) => {
    const garbage = join(dir, 'garbage.kubeconfig');
    await writeFile(garbage, 'clusters: [\n  - {name: x\n');
    const message = await exitsWithMessage(command, { KUBECONFIG: garbage }, 'KUBECONFIG');
    expect(message).toContain(garbage);
    await exitsWithMessage(command, { KUBECONFIG: join(dir, 'missing.kubeconfig') }, 'KUBECONFIG');
  });

  it('Redis down at start: the watcher keeps running, reports Redis on /readyz, and recovers when Redis starts', async () => {
    printLogsOnFailure(procs);
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const prefix = uniquePrefix('bad');
    const watcher = spawnEbb('watcher', env({ EBB_REDIS_URL: url }, prefix));
    const worker = spawnEbb('worker', env({ EBB_REDIS_URL: url }, prefix));
    procs.push(watcher, worker);
    const httpPort = await watcher.httpPort();
    await worker.httpPort();
    await watcher.waitForLog((l) => l.msg === 'redis connection error', 15_000, 'a redis connection error');
    await worker.waitForLog((l) => l.msg === 'redis connection error', 15_000, 'a redis connection error');
    const down = await httpGet(httpPort, '/readyz');
    expect(down.status).toBe(503);
    expect(down.body).toMatch(/redis/i);

    redis = await startRedis({ dir, port });
    await waitFor(async () => ((await httpGet(httpPort, '/readyz')).status === 200 ? true : undefined), {
      timeoutMs: 45_000,
      intervalMs: 250,
      what: 'watcher /readyz 200 after Redis started',
    });
    // The loop works end to end once Redis is there.
    await waitAllObserved(sandbox().rest, ns, 1, 30_000);
    expect(watcher.running() && worker.running()).toBe(true);
    expect([watcher.stderr(), worker.stderr()]).toEqual(['', '']);
    await Promise.all([watcher.stop(), worker.stop()]);
  });

  it('SIGTERM while Redis is unreachable: both processes exit by themselves, none hangs', async () => {
    printLogsOnFailure(procs);
    const url = `redis://127.0.0.1:${await freePort()}`;
    const prefix = uniquePrefix('bad');
    const watcher = spawnEbb('watcher', env({ EBB_REDIS_URL: url }, prefix));
    const worker = spawnEbb('worker', env({ EBB_REDIS_URL: url, EBB_SHUTDOWN_TIMEOUT: '2s' }, prefix));
    procs.push(watcher, worker);
    await Promise.all([watcher.httpPort(), worker.httpPort()]);
    await watcher.waitForLog((l) => l.msg === 'redis connection error', 15_000, 'a redis connection error');
    await worker.waitForLog((l) => l.msg === 'redis connection error', 15_000, 'a redis connection error');
    for (const p of [watcher, worker]) process.kill(p.pid, 'SIGTERM');
    const within = (ms: number) => new Promise<'hung'>((res) => setTimeout(() => res('hung'), ms).unref());
    // Deadlines: watcher 15 s, worker EBB_SHUTDOWN_TIMEOUT + 5 s; a process still there after 25 s hangs.
    const outcomes = await Promise.all([watcher, worker].map((p) => Promise.race([p.exited, within(25_000)])));
    for (const o of outcomes) {
      expect(o).not.toBe('hung');
      expect(o).toMatchObject({ signal: null });
    }
  });

  it('apiserver unreachable at start: the watcher retries with the error logged, /readyz 503, and recovers', async () => {
    printLogsOnFailure(procs);
    const { kubeconfig } = sandbox();
    proxy = await startTcpProxy(undefined); // refuses every connection
    const viaProxy = await proxiedKubeconfig(kubeconfig, join(dir, 'proxied.kubeconfig'), proxy.port);
    const watcher = spawnEbb('watcher', env({ KUBECONFIG: viaProxy }));
    procs.push(watcher);
    const httpPort = await watcher.httpPort();
    const failed = await watcher.waitForLog((l) => l.msg === 'list/watch failed; retrying', 15_000, 'list/watch failed');
    expect(String(failed['error'])).toMatch(/unreachable|ECONNRESET|socket|closed/i);
    const down = await httpGet(httpPort, '/readyz');
    expect(down.status).toBe(503);
    expect(down.body).toMatch(/watches not established/);

    proxy.setTarget(await kubeconfigServer(kubeconfig));
    await waitFor(async () => ((await httpGet(httpPort, '/readyz')).status === 200 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: 'watcher /readyz 200 after the apiserver became reachable',
    });
    expect(watcher.running()).toBe(true);
    expect(watcher.logs.some((l) => l.msg === 'listed' && l['source'] === `apps/${ns}`)).toBe(true);
  });
});
