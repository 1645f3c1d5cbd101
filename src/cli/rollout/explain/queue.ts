/**
 * What the queues hold of one App, read from Redis with the settings `ebb queue` uses (EBB_REDIS_URL,
 * EBB_QUEUE_PREFIX, ...): its last reconcile job (the summary it returned and its log lines), a job waiting or
 * running, and its timers. Read only, within a deadline (`--queue-timeout`, 3 s unless set): when Redis cannot be reached the answer is a
 * note, and explain goes on from the apiserver alone.
 */
import type { Job } from 'bullmq';
import { errorMessage } from '../../../common/errors.ts';
import { redisConnection, type RedisClient } from '../../../queue/connection.ts';
import { dedupId } from '../../../queue/names.ts';
import { shardOf } from '../../../queue/shards.ts';
import { createReconcileQueue, createTimersQueue, type ReconcileQueue, type TimersQueue } from '../../../queue/queues.ts';
import { describeRedis, redisLocationSetting } from '../../../queue/redis-target.ts';
import { within } from './deadline.ts';
import type { LastReconcile, QueueFacts } from './model.ts';

const SCAN_COUNT = 500;
const MAX_LOG_LINES = 12;

const escapeRe = (s: string): string => s.replace(/[.]/g, '\\.');

/** Members of sorted set `key` matching `pattern` (one ZSCAN pass), with their scores. */
async function scanSet(client: RedisClient, key: string, pattern: string): Promise<[string, number][]> {
  const out: [string, number][] = [];
  let cursor = '0';
  do {
    const [next, flat] = await client.zscan(key, cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
    for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i] ?? '', Number(flat[i + 1])]);
    cursor = next;
  } while (cursor !== '0');
  return out;
}

/** The newest job of the App among `ids` (reconcile job ids are `<dedup id>.<12 hex>`). */
function newest(entries: readonly [string, number][], exact: RegExp): string | undefined {
  let best: [string, number] | undefined;
  for (const e of entries) if (exact.test(e[0]) && (!best || e[1] > best[1])) best = e;
  return best?.[0];
}

async function lastReconcile(client: RedisClient, reconcile: ReconcileQueue, id: string): Promise<LastReconcile | undefined> {
  const exact = new RegExp(`^${escapeRe(id)}\\.[0-9a-f]{12}$`);
  const [completed, failed] = await Promise.all([
    scanSet(client, reconcile.keys['completed'] ?? '', `${id}.*`),
    scanSet(client, reconcile.keys['failed'] ?? '', `${id}.*`),
  ]);
  const candidates = [completed, failed].map((set) => newest(set, exact)).filter((x): x is string => x !== undefined);
  const jobs = (await Promise.all(candidates.map((j) => reconcile.getJob(j)))).filter((j): j is Job => j !== undefined);
  const job = jobs.sort((a, b) => (b.finishedOn ?? 0) - (a.finishedOn ?? 0))[0];
  if (!job?.id) return undefined;
  const logs = await reconcile.getJobLogs(job.id, 0, MAX_LOG_LINES - 1, true);
  const failedJob = job.finishedOn !== undefined && job.failedReason !== undefined && job.failedReason !== '';
  const returnValue = job.returnvalue as unknown;
  return {
    jobId: job.id,
    finishedAt: job.finishedOn,
    failed: failedJob,
    ...(failedJob ? { failedReason: job.failedReason.slice(0, 300) } : {}),
    ...(returnValue && typeof returnValue === 'object' ? { returnValue: returnValue as Record<string, unknown> } : {}),
    logs: logs.logs,
  };
}

async function pendingJob(reconcile: ReconcileQueue, id: string): Promise<QueueFacts['pending']> {
  const jobId = await reconcile.getDeduplicationJobId(id);
  const job = jobId ? await reconcile.getJob(jobId) : undefined;
  if (!job?.id) return undefined;
  const state = await job.getState();
  return ['waiting', 'prioritized', 'active', 'delayed', 'waiting-children'].includes(state) ? { jobId: job.id, state, enqueuedAt: job.timestamp } : undefined;
}

async function timersOf(client: RedisClient, timers: TimersQueue, id: string): Promise<QueueFacts['timers']> {
  const exact = new RegExp(`^${escapeRe(id)}~[a-z0-9-]+\\.[0-9a-f]{12}$`);
  const ids = (await scanSet(client, timers.keys['delayed'] ?? '', `${id}~*`)).map(([j]) => j).filter((j) => exact.test(j));
  const jobs = await Promise.all(ids.map((j) => timers.getJob(j)));
  return jobs.flatMap((j) => (j ? [{ reason: j.data.reason, dueAt: j.data.dueAt }] : []));
}

/** Reads the App's facts from the queues; `{ note }` instead when they cannot be read in time. */
export async function readQueueFacts(namespace: string, name: string, deadlineMs: number): Promise<{ facts?: QueueFacts; note?: string }> {
  let cfg;
  try {
    cfg = (await import('../../queue/config.ts')).loadQueueCliConfig();
  } catch (err) {
    return { note: `the queues were not read (${errorMessage(err)}): no last reconcile or timers shown` };
  }
  const client = redisConnection(cfg.redis, { forWorker: false, name: 'ebb-rollout-explain' });
  const id = dedupId({ kind: 'App', namespace, name });
  // The App's jobs and timers all live in its shard.
  const shard = shardOf(id, cfg.shards);
  const reconcile = createReconcileQueue(client, cfg, shard);
  const timers = createTimersQueue(client, cfg, shard);
  for (const q of [reconcile, timers]) q.on('error', () => undefined);
  const where = `Redis at ${describeRedis(cfg.redis)} (${redisLocationSetting(cfg.redis)})`;
  try {
    const read = (async (): Promise<QueueFacts> => {
      await client.ping();
      const [last, pending, due] = await Promise.all([lastReconcile(client, reconcile, id), pendingJob(reconcile, id), timersOf(client, timers, id)]);
      return { last, pending, timers: due };
    })();
    return { facts: await within(read, deadlineMs) };
  } catch (err) {
    return {
      note: `the queues were not read (${where}: ${errorMessage(err)}): no last reconcile or timers shown; set the watcher's EBB_REDIS_* and EBB_QUEUE_PREFIX to see them, or a longer --queue-timeout`,
    };
  } finally {
    await Promise.all([reconcile.close(), timers.close()]).catch(() => undefined);
    client.disconnect();
  }
}
