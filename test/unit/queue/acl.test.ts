/**
 * The Redis ACL of deploy/components/redis.yaml against a real redis-server: ebb's own queue code, connected as
 * the user `ebb` with its password from EBB_REDIS_PASSWORD, enqueues, works, sets and fires timers, reads
 * metrics, status and the KEDA backlog, pauses and resumes, and writes limit overrides without one command or
 * key refused (Redis's ACL LOG stays empty). The same user cannot reconfigure, flush or stop Redis, run
 * administrative commands, or touch a key outside the `{ebb}` prefix and its shards' `{ebb-N}`, directly or from a Lua script; a
 * client without credentials is refused. The server runs the manifest's redis.conf and ACL file; the test
 * adds an `admin` user of its own to read the ACL LOG.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { freePort } from '../../../harness/sandbox/ports.ts';
import { startChild, type Child } from '../../../harness/sandbox/process.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { dueSoonBacklog } from '../../../src/queue/backlog.ts';
import { redisConnection, type RedisClient } from '../../../src/queue/connection.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { applyLimitsWithOverrides } from '../../../src/queue/knobs.ts';
import { registerQueueMetrics } from '../../../src/queue/metrics.ts';
import { KEY_PREFIX, RECONCILE_QUEUE, TIMERS_QUEUE, type ObjectKey } from '../../../src/queue/names.ts';
import { changeLimit, retryFailed } from '../../../src/queue/operator.ts';
import { readOverrides } from '../../../src/queue/overrides.ts';
import {
  createReconcileQueue,
  createReconcileQueues,
  createTimersQueue,
  createTimersQueues,
  reconcileWorkerOptions,
  timersWorkerOptions,
} from '../../../src/queue/queues.ts';
import { forKey } from '../../../src/queue/shards.ts';
import { shardedBacklog } from '../../../src/queue/backlog.ts';
import { parseQueueConfig, type QueueConfig } from '../../../src/queue/settings.ts';
import { readStatus } from '../../../src/queue/status.ts';
import { processTimer, setTimer, type TimerData } from '../../../src/queue/timers.ts';
import { namespaceGate } from '../../../src/queue/namespace-gate.ts';
import { workerSlots } from '../../../src/queue/worker-slots.ts';
import { createLogger } from '../../../src/common/log.ts';
import { notifyQueue } from '../../../src/queue/notify-queue.ts';
import { redisQuarantine, shardedQuarantine } from '../../../src/queue/quarantine.ts';
import { redisPullBudget } from '../../../src/workers/shared/pull-budget.ts';

const MANIFEST = new URL('../../../deploy/components/redis.yaml', import.meta.url);
const ADMIN_PASSWORD = randomBytes(16).toString('hex');
const WAIT = { timeoutMs: 10_000, intervalMs: 25 };

/** The ConfigMap `ebb-redis` of the manifest: redis.conf, users.acl and start.sh. */
async function redisConfigMap(): Promise<Record<string, string>> {
  const docs = parseAllDocuments(await readFile(MANIFEST, 'utf8')).map((d) => d.toJS() as { kind: string; data?: Record<string, string> });
  const cm = docs.find((d) => d.kind === 'ConfigMap');
  if (!cm?.data) throw new Error('deploy/components/redis.yaml has no ConfigMap');
  return cm.data;
}

describe('the Redis ACL user of deploy/', () => {
  const password = randomBytes(32).toString('hex');
  const closables: { close(): Promise<unknown> }[] = [];
  const clients: RedisClient[] = [];
  let dir = '';
  let port = 0;
  let server: Child | undefined;
  let admin: Redis;
  let cfg: QueueConfig;

  const connect = (forWorker: boolean): RedisClient => {
    const c = redisConnection(cfg.redis, { forWorker, name: forWorker ? 'acl-worker' : 'acl-producer' });
    clients.push(c);
    return c;
  };
  /** What a command refused by the ACL or authentication answers. */
  const refusal = (p: Promise<unknown>): Promise<string> =>
    p.then(
      (v) => `allowed: ${JSON.stringify(v)}`,
      (err: Error) => err.message,
    );

  beforeAll(async () => {
    const data = await redisConfigMap();
    dir = await mkdtemp(join(tmpdir(), 'ebb-redis-acl-'));
    const acl = `${(data['users.acl'] ?? '').replaceAll('@PASSWORD@', password)}user admin on >${ADMIN_PASSWORD} ~* &* +@all\n`;
    await writeFile(join(dir, 'users.acl'), acl, { mode: 0o600 });
    await writeFile(join(dir, 'redis.conf'), data['redis.conf'] ?? '');
    port = await freePort();
    // The manifest's configuration; only where it listens and keeps its files differ.
    const args = [join(dir, 'redis.conf'), '--aclfile', join(dir, 'users.acl'), '--port', String(port), '--bind', '127.0.0.1', '--dir', dir];
    server = startChild('redis-acl', 'redis-server', [...args, '--appendonly', 'no'], join(dir, 'redis.log'));
    admin = new Redis({ port, host: '127.0.0.1', username: 'admin', password: ADMIN_PASSWORD, lazyConnect: true, maxRetriesPerRequest: 0 });
    admin.on('error', () => undefined);
    await waitFor(async () => ((await admin.ping().catch(() => undefined)) === 'PONG' ? true : undefined), { ...WAIT, what: 'redis-server with the ACL' });
    // The URL names the user; the password comes from its own setting, as the manifests set it from the Secret.
    cfg = parseQueueConfig({ EBB_REDIS_URL: `redis://ebb@127.0.0.1:${port}`, EBB_REDIS_PASSWORD: password, EBB_QUEUE_ATTEMPTS: '1' });
  });

  afterAll(async () => {
    for (const c of closables.reverse()) await c.close().catch(() => undefined);
    for (const c of clients) c.disconnect();
    admin?.disconnect();
    await server?.stop(5_000);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is what the manifest configures: the default user off, protected mode on, maxmemory with noeviction', async () => {
    expect(cfg.prefix).toBe(KEY_PREFIX);
    expect(await admin.call('CONFIG', 'GET', 'protected-mode')).toEqual(['protected-mode', 'yes']);
    expect(await admin.call('CONFIG', 'GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    const [, maxmemory] = (await admin.call('CONFIG', 'GET', 'maxmemory')) as string[];
    expect(Number(maxmemory)).toBe(256 * 1024 * 1024);
    const users = (await admin.call('ACL', 'LIST')) as string[];
    expect(users.find((u) => u.startsWith('user default '))).toMatch(/^user default off (?!.*nopass).*resetchannels -@all$/);
  });

  it("runs ebb's queue code without one refusal", async () => {
    const web: ObjectKey = { kind: 'App', namespace: 'tenant-a', name: 'web' };
    const api: ObjectKey = { kind: 'App', namespace: 'tenant-b', name: 'api' };
    const reconcile = createReconcileQueue(connect(false), cfg);
    const timers = createTimersQueue(connect(false), cfg);
    closables.push(reconcile, timers);
    const registry = new Registry();
    registerQueueMetrics(registry, [reconcile, timers]);

    // Overrides and limits, as the watcher applies them and `ebb queue` changes them.
    const client = connect(false);
    await applyLimitsWithOverrides(reconcile, client, cfg);
    await changeLimit(reconcile, client, cfg.prefix, { limit: 'globalConcurrency', value: 4 });
    expect(await readOverrides(client, cfg.prefix)).toEqual({ globalConcurrency: 4 });
    expect(await applyLimitsWithOverrides(reconcile, client, cfg)).toMatchObject({ globalConcurrency: 4 });

    // Enqueue while paused (the backlog then reads 0), resume, and work: one job succeeds, one fails.
    await reconcile.pause();
    await enqueue(reconcile, web);
    await enqueue(reconcile, api, { priority: 10 });
    expect((await dueSoonBacklog(reconcile, 5_000)).total).toBe(0);
    await reconcile.resume();
    expect((await dueSoonBacklog(reconcile, 5_000)).total).toBe(2);
    const done: string[] = [];
    const worker = new Worker<ObjectKey, void, string>(
      RECONCILE_QUEUE,
      (job: Job<ObjectKey, void, string>) => {
        done.push(job.data.name);
        return job.data.name === 'api' ? Promise.reject(new Error('refused by the apiserver')) : Promise.resolve();
      },
      reconcileWorkerOptions(connect(true), cfg),
    );
    closables.push(worker);
    await waitFor(async () => ((await reconcile.getFailedCount()) === 1 && done.length === 2 ? true : undefined), { ...WAIT, what: 'both jobs run' });

    // A timer fires into the reconcile queue through the timers worker.
    const timersWorker = new Worker<TimerData, void, string>(TIMERS_QUEUE, (job) => processTimer(job, reconcile), timersWorkerOptions(connect(true), cfg));
    closables.push(timersWorker);
    expect(await setTimer(timers, web, 'grace', Date.now() + 50)).toBe('created');
    await waitFor(() => (done.filter((n) => n === 'web').length === 2 ? true : undefined), { ...WAIT, what: 'the timer fired a reconcile' });

    // What `ebb queue status` and `retry-failed`, the metrics endpoint and Bull Board's counts read.
    const status = await readStatus([reconcile, timers], client, cfg.prefix, { failedLimit: 5 });
    expect(status.queues[0]?.counts.failed).toBe(1);
    expect(status.queues[0]?.workers).toBeGreaterThan(0);
    expect(await registry.getSingleMetricAsString('ebb_queue_jobs')).toContain('state="failed"} 1');
    // At least the job that failed above (a loaded machine may fail another one, e.g. a stalled job): each is added again.
    const retried = await retryFailed(reconcile, timers);
    expect(retried.failed).toBeGreaterThanOrEqual(1);
    expect(retried.added).toBe(retried.failed);

    // The worker's own keys: quarantine records, the namespace cap's leases, the pre-warm pull budget, and the
    // notify queue (rollout notifications).
    const quarantine = redisQuarantine(client, cfg.prefix);
    expect(await quarantine.started('App tenant-a/web')).toBe(0);
    await quarantine.ended('App tenant-a/web');
    await quarantine.hold('App tenant-b/api', { since: 'now', unfinished: 3, generation: 1 });
    expect([...(await quarantine.list()).keys()]).toEqual(['App tenant-b/api']);
    expect(await quarantine.release('App tenant-b/api')).toBe(true);
    const slots = workerSlots(client, cfg.prefix, { slots: 2, everyMs: 60_000, log: createLogger('test', 'silent') });
    await slots.start();
    const gate = namespaceGate(client, cfg.prefix, { cap: { kind: 'share', percent: 50 }, leaseMs: 1_000, minDelayMs: 100 });
    if (!gate) throw new Error('expected a gate');
    expect(await gate.acquire('tenant-a', 'job-1', Date.now())).toBe(true);
    await gate.release('tenant-a', 'job-1');
    await slots.stop();
    expect(await redisPullBudget(client, cfg.prefix, 2).settle('tenant-a/web', { pulling: [], done: [], want: ['node-1'] })).toEqual({ granted: ['node-1'] });
    const notify = notifyQueue(client, cfg);
    closables.push(notify);
    await notify.add('notify', { text: 'x' }, { jobId: 'notify.x' });
    expect(await notify.getJobCounts('wait')).toEqual({ wait: 1 });

    const denied = ((await admin.call('ACL', 'LOG')) as unknown[][]).map((entry) => JSON.stringify(entry));
    expect(denied).toEqual([]);
  });

  it('lets queue shards work too (`{ebb-N}` keys)', async () => {
    // A prefix of its own (`{ebb-s}`, `{ebb-s-1}`, `{ebb-s-2}`: the pattern of `{ebb-1}`): the worker above still consumes `{ebb}`.
    const env = { EBB_REDIS_URL: `redis://ebb@127.0.0.1:${port}`, EBB_REDIS_PASSWORD: password, EBB_QUEUE_SHARDS: '3', EBB_QUEUE_PREFIX: '{ebb-s}' };
    const sharded = parseQueueConfig(env);
    const client = connect(false);
    const queues = createReconcileQueues(client, sharded);
    const timers = createTimersQueues(client, sharded);
    closables.push(...queues, ...timers);
    const keys: ObjectKey[] = Array.from({ length: 12 }, (_, i) => ({ kind: 'App', namespace: 'tenant-s', name: `app-${i}` }));
    for (const key of keys) {
      await enqueue(forKey(queues, key), key);
      await setTimer(forKey(timers, key), key, 'grace', Date.now() + 60_000);
    }
    const backlog = await shardedBacklog(queues, 5_000);
    expect(backlog.total).toBe(12);
    expect(backlog.shards.filter((b) => b.total > 0)).toHaveLength(3);
    await applyLimitsWithOverrides(queues, client, { ...sharded, globalConcurrency: 6 });
    expect(await Promise.all(queues.map((q) => q.getGlobalConcurrency()))).toEqual([2, 2, 2]);
    const quarantine = shardedQuarantine(client, sharded.prefix, 3);
    await quarantine.hold('App tenant-s/app-1', { since: 'now', unfinished: 5, generation: 1 });
    expect([...(await quarantine.list()).keys()]).toEqual(['App tenant-s/app-1']);
    const denied = ((await admin.call('ACL', 'LOG')) as unknown[][]).map((entry) => JSON.stringify(entry));
    expect(denied).toEqual([]);
  });

  it('refuses what no ebb process does: configuration, flushing, administration, other keys', async () => {
    const ebb = connect(false);
    const other = `tenant-${randomBytes(3).toString('hex')}`;
    await admin.set(other, 'kept');
    const refused = {
      'CONFIG SET': await refusal(ebb.call('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru')),
      'CONFIG GET': await refusal(ebb.call('CONFIG', 'GET', 'requirepass')),
      FLUSHALL: await refusal(ebb.flushall()),
      FLUSHDB: await refusal(ebb.flushdb()),
      SHUTDOWN: await refusal(ebb.call('SHUTDOWN', 'NOSAVE')),
      'ACL SETUSER': await refusal(ebb.call('ACL', 'SETUSER', 'ebb', '~*')),
      'CLIENT KILL': await refusal(ebb.call('CLIENT', 'KILL', 'TYPE', 'normal')),
      KEYS: await refusal(ebb.keys('*')),
      SCAN: await refusal(ebb.scan(0)),
      MONITOR: await refusal(ebb.call('MONITOR')),
      'SCRIPT FLUSH': await refusal(ebb.call('SCRIPT', 'FLUSH')),
      REPLICAOF: await refusal(ebb.call('REPLICAOF', '127.0.0.1', '1')),
      'GET outside the prefix': await refusal(ebb.get(other)),
      'SET outside the prefix': await refusal(ebb.set('ebb:x', '1')),
      'DEL outside the prefix': await refusal(ebb.del(other)),
      'a script writing outside the prefix': await refusal(ebb.eval(`return redis.call('SET', '${other}', 'gone')`, 0)),
      PUBLISH: await refusal(ebb.publish('news', 'x')),
    };
    // Inside a script, Redis words the refusal of a key as its own error.
    for (const [command, answer] of Object.entries(refused)) expect(answer, command).toMatch(/^NOPERM|^ERR The user executing the script can't access/);
    expect(await admin.get(other)).toBe('kept');
    expect(await admin.call('CONFIG', 'GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);

    const stranger = async (...command: string[]): Promise<string> => {
      const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
      c.on('error', () => undefined);
      try {
        await c.connect();
        return await refusal(c.call(command[0] ?? '', ...command.slice(1)));
      } finally {
        c.disconnect();
      }
    };
    expect(await stranger('GET', `${KEY_PREFIX}:x`)).toMatch(/^NOAUTH/);
    expect(await stranger('AUTH', 'default', 'anything')).toMatch(/^WRONGPASS/);
    expect(await stranger('AUTH', 'ebb', 'not-the-password')).toMatch(/^WRONGPASS/);
  });
});
