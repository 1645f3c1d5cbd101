import { errorMessage } from '../../common/errors.ts';
import { sleep } from '../../common/wait.ts';
import { redisConnection, type RedisClient } from '../../queue/connection.ts';
import { describeRedis, redisLocationSetting, type RedisTarget } from '../../queue/redis-target.ts';
import { changeLimit, retryFailed } from '../../queue/operator.ts';
import { createReconcileQueues, createTimersQueues, type ReconcileQueue, type TimersQueue } from '../../queue/queues.ts';
import type { QueueConfig } from '../../queue/settings.ts';
import { shardedQuarantine } from '../../queue/quarantine.ts';
import { readStatus } from '../../queue/status.ts';
import { printable } from '../printable.ts';
import { parseQueueArgs, QUEUE_USAGE, type QueueArgs } from './args.ts';
import { formatQuarantined, formatRateLimit, formatRetryFailed, formatStatus, statusJson } from './format.ts';

interface Handles {
  cfg: QueueConfig;
  client: RedisClient;
  /** The queues of every shard, indexed by shard. */
  reconcile: ReconcileQueue[];
  timers: TimersQueue[];
}

/** Runs one parsed subcommand against the queues; returns what to print. */
async function perform(args: Exclude<QueueArgs, { op: 'help' }>, h: Handles): Promise<string> {
  switch (args.op) {
    case 'status': {
      const status = await readStatus([...h.reconcile, ...h.timers], h.client, h.cfg.prefix, { failedLimit: args.failed });
      return args.json ? statusJson(status) : formatStatus(status);
    }
    case 'pause':
      await Promise.all(h.reconcile.map((q) => q.pause()));
      return 'reconcile paused: no reconcile starts until `ebb queue resume`; the watcher still records every event as a job\n';
    case 'resume':
      await Promise.all(h.reconcile.map((q) => q.resume()));
      return 'reconcile resumed\n';
    case 'concurrency':
      await changeLimit(h.reconcile, h.client, h.cfg.prefix, { limit: 'globalConcurrency', value: args.value });
      if (args.value === 'reset') return "global concurrency override removed: the watcher's setting applies at its next resync or start\n";
      return `global concurrency ${args.value === null ? 'removed (no limit)' : `set to ${args.value}`}; running workers obey it at their next job\n`;
    case 'rate-limit':
      await changeLimit(h.reconcile, h.client, h.cfg.prefix, { limit: 'globalRateLimit', value: args.value });
      if (args.value === 'reset') return "global rate limit override removed: the watcher's setting applies at its next resync or start\n";
      return `global rate limit ${args.value === null ? 'removed (no limit)' : `set to ${formatRateLimit(args.value)}`}; running workers obey it at their next job\n`;
    case 'retry-failed':
      return formatRetryFailed(await retryFailed(h.reconcile, h.timers));
    case 'quarantined':
    case 'release':
      return quarantineOp(args, h);
  }
}

async function quarantineOp(args: Extract<QueueArgs, { op: 'quarantined' | 'release' }>, h: Handles): Promise<string> {
  const store = shardedQuarantine(h.client, h.cfg.prefix, h.cfg.shards);
  if (args.op === 'quarantined') {
    const held = await store.list();
    return args.json ? `${JSON.stringify(Object.fromEntries(held), null, 2)}\n` : formatQuarantined(held);
  }
  const released = await store.release(args.key);
  return released ? `${args.key}: quarantine lifted; its next event or resync reconciles it\n` : `${args.key}: not quarantined\n`;
}

/** How long `ebb queue` waits for Redis to answer before it gives up. */
const REDIS_DEADLINE_MS = 10_000;

/** Resolves once Redis answers; otherwise fails naming it (redacted), after at most REDIS_DEADLINE_MS. */
async function reachable(client: RedisClient, target: RedisTarget): Promise<void> {
  const ac = new AbortController();
  const deadline = sleep(REDIS_DEADLINE_MS, ac.signal).then(
    () => Promise.reject(new Error(`no answer within ${REDIS_DEADLINE_MS / 1000}s`)),
    () => undefined,
  );
  try {
    await Promise.race([client.ping(), deadline]);
  } catch (err) {
    throw new Error(`cannot reach Redis at ${describeRedis(target)} (${redisLocationSetting(target)}): ${errorMessage(err)}`, { cause: err });
  } finally {
    ac.abort();
  }
}

/**
 * `ebb queue <subcommand>`: inspect and steer the queues of the watcher and workers that share EBB_REDIS_URL
 * and EBB_QUEUE_PREFIX. Bad arguments throw UsageError (exit code 2), bad settings one ConfigError.
 */
export async function queueCommand(argv: string[]): Promise<number> {
  const args = parseQueueArgs(argv);
  if (args.op === 'help') {
    process.stdout.write(QUEUE_USAGE);
    return 0;
  }
  const { loadQueueCliConfig } = await import('./config.ts');
  const cfg = loadQueueCliConfig();
  const client = redisConnection(cfg.redis, { forWorker: false, name: 'ebb-queue-cli', commandTimeoutMs: cfg.redisCommandTimeoutMs });
  const reconcile = createReconcileQueues(client, cfg);
  const timers = createTimersQueues(client, cfg);
  // The connection reports its own failures through the commands that fail; nothing to print twice.
  for (const q of [...reconcile, ...timers]) q.on('error', () => undefined);
  try {
    await reachable(client, cfg.redis);
    // Job data and failure reasons are anyone's text: printed without escape sequences or control characters.
    process.stdout.write(printable(await perform(args, { cfg, client, reconcile, timers }), { keepNewlines: true }));
    return 0;
  } finally {
    await Promise.all([...reconcile, ...timers].map((q) => q.close())).catch(() => undefined);
    client.disconnect();
  }
}
