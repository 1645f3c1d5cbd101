import { formatDuration } from '../common/duration.ts';
import { frozen, parseSettings, table, type Env, type Values } from '../common/settings.ts';
import { REDIS_SETTINGS, redisTargetOfSettings } from './redis-settings.ts';
import type { RedisTarget } from './redis-target.ts';
import { FAIRNESS_MODES, type Fairness } from './fairness.ts';
import { KEY_PREFIX } from './names.ts';
import { MAX_SHARDS } from './shards.ts';

/** The queue part of a process's configuration: validated once, frozen, passed down. */
export interface QueueConfig {
  /** Where Redis is, in any mode; holds credentials: log `describeRedis(redis)`, never this. */
  readonly redis: RedisTarget;
  /** Deadline of a producer connection's commands (`redisConnection`'s commandTimeoutMs). */
  readonly redisCommandTimeoutMs: number;
  /** BullMQ key prefix; must contain a `{hash tag}` so all keys share one Redis Cluster slot. */
  readonly prefix: string;
  /**
   * Queue shards (`shards.ts`): 1 is the unsharded queues under `prefix`; N > 1 adds N-1 copies under their
   * own hash tags, each object in one of them. Worker concurrency and the global limits are split across them.
   */
  readonly shards: number;
  /** Jobs one worker process runs at once. */
  readonly workerConcurrency: number;
  /** Jobs all workers together run at once; undefined = no global limit. */
  readonly globalConcurrency: number | undefined;
  /** At most `max` jobs start per `durationMs` across all workers; undefined = no limit. */
  readonly globalRateLimit: { readonly max: number; readonly durationMs: number } | undefined;
  /** A worker that has not renewed a job's lock for this long is presumed dead; its job is retried. */
  readonly lockDurationMs: number;
  /** Completed / failed jobs kept for inspection (Bull Board); older ones are removed. */
  readonly removeOnComplete: number;
  readonly removeOnFail: number;
  /** Attempts per job, the first included; retries use `backoff`. */
  readonly attempts: number;
  readonly backoff: { readonly baseMs: number; readonly capMs: number };
  /**
   * The watcher re-enqueues the objects that are not settled or whose job failed this often (at low
   * priority), and every known object every FULL_RESYNC_EVERY-th time; 0 disables resync.
   */
  readonly resyncPeriodMs: number;
  /** How the watcher orders changes of different namespaces: `namespace` (tenant tiers) or `off` (FIFO). */
  readonly fairness: Fairness;
}

/** Every setting of the queue, read by the watcher and the worker alike. */
export const QUEUE_SETTINGS = table(
  {
    ...REDIS_SETTINGS.entries,
    prefix: {
      name: 'EBB_QUEUE_PREFIX',
      type: 'string',
      default: KEY_PREFIX,
      pattern: /^[^:\s]*\{[^{}:\s]+\}[^:\s]*$/,
      format: "contain a hash tag like {ebb} and no ':' or spaces",
      doc: 'BullMQ key prefix; its `{hash tag}` keeps every key in one Redis Cluster slot',
    },
    shards: {
      name: 'EBB_QUEUE_SHARDS',
      type: 'int',
      default: 1,
      min: 1,
      max: MAX_SHARDS,
      doc: 'queue shards, each under its own hash tag (`{ebb}`, `{ebb-1}`, ...) so a Redis Cluster spreads them over its primaries; an object always uses the shard its key hashes to; every worker consumes every shard, and `EBB_WORKER_CONCURRENCY` and the global limits are split across the shards; set the same value on the watcher, the workers and `ebb queue`',
    },
    workerConcurrency: { name: 'EBB_WORKER_CONCURRENCY', type: 'int', default: 8, min: 1, max: 1_000, doc: 'reconciles one worker process runs at once' },
    globalConcurrency: {
      name: 'EBB_QUEUE_GLOBAL_CONCURRENCY',
      type: 'int',
      min: 1,
      max: 100_000,
      doc: 'reconciles all workers together run at once (stored in Redis by the watcher; `ebb queue concurrency` overrides it at runtime); unset: no limit',
    },
    rateLimitMax: {
      name: 'EBB_QUEUE_RATE_LIMIT_MAX',
      type: 'int',
      min: 1,
      max: 1_000_000,
      doc: 'at most this many reconciles start per `EBB_QUEUE_RATE_LIMIT_DURATION`, cluster-wide (stored in Redis by the watcher; `ebb queue rate-limit` overrides it at runtime); unset: no limit',
    },
    rateLimitDuration: {
      name: 'EBB_QUEUE_RATE_LIMIT_DURATION',
      type: 'duration',
      default: '1s',
      min: '1ms',
      max: '1h',
      doc: 'the window of `EBB_QUEUE_RATE_LIMIT_MAX` (set only with it)',
    },
    lockDuration: {
      name: 'EBB_QUEUE_LOCK_DURATION',
      type: 'duration',
      default: '30s',
      min: '5s',
      max: '10m',
      doc: "a worker that stops renewing a job's lock this long is presumed dead; the job is retried",
    },
    removeOnComplete: { name: 'EBB_QUEUE_REMOVE_ON_COMPLETE', type: 'int', default: 1000, min: 0, max: 1_000_000, doc: 'completed jobs kept for Bull Board' },
    removeOnFail: { name: 'EBB_QUEUE_REMOVE_ON_FAIL', type: 'int', default: 5000, min: 0, max: 1_000_000, doc: 'failed jobs kept for Bull Board' },
    attempts: {
      name: 'EBB_QUEUE_ATTEMPTS',
      type: 'int',
      default: 20,
      min: 1,
      max: 1_000,
      doc: 'attempts per reconcile job, the first included, before it is kept as failed (after an error that may heal, its object is reconciled again after `EBB_QUEUE_BACKOFF_MAX` at most)',
    },
    backoffBase: {
      name: 'EBB_QUEUE_BACKOFF_BASE',
      type: 'duration',
      default: '1s',
      min: '1ms',
      max: '1h',
      doc: 'first retry delay of a failed reconcile; it doubles per attempt, with full jitter',
    },
    backoffMax: { name: 'EBB_QUEUE_BACKOFF_MAX', type: 'duration', default: '5m', min: '1ms', max: '24h', doc: 'cap of the retry delay' },
    fairness: {
      name: 'EBB_QUEUE_FAIRNESS',
      type: 'enum',
      values: FAIRNESS_MODES,
      default: 'namespace',
      doc: "`namespace`: a namespace that enqueues more than a burst of changes waits behind quieter namespaces' changes (BullMQ priorities from its recent enqueue rate); `off`: changes run in arrival order",
    },
    resyncPeriod: {
      name: 'EBB_RESYNC_PERIOD',
      type: 'duration',
      default: '10m',
      min: '1s',
      max: '24h',
      zeroDisables: true,
      doc: 'the watcher re-enqueues, at low priority, the objects that are not settled or whose job failed this often, and every known object every sixth time (and after Redis lost its data), and re-applies the global limits not overridden with `ebb queue`',
    },
  },
  [
    ...REDIS_SETTINGS.checks,
    {
      uses: ['rateLimitMax'],
      problems: (v, isSet) =>
        v.rateLimitMax === undefined && isSet('rateLimitDuration')
          ? ['EBB_QUEUE_RATE_LIMIT_DURATION is set but EBB_QUEUE_RATE_LIMIT_MAX is not: set both to enable the global rate limit']
          : [],
    },
    {
      uses: ['shards', 'workerConcurrency', 'globalConcurrency', 'rateLimitMax'],
      problems: (v) => shardProblems(v),
    },
    {
      uses: ['backoffBase', 'backoffMax'],
      problems: (v) =>
        v.backoffBase > v.backoffMax
          ? [`EBB_QUEUE_BACKOFF_BASE (${formatDuration(v.backoffBase)}) must not exceed EBB_QUEUE_BACKOFF_MAX (${formatDuration(v.backoffMax)})`]
          : [],
    },
  ],
);

/** Each shard needs a whole share (at least 1) of every limit that is split across the shards. */
function shardProblems(v: { shards: number; workerConcurrency: number; globalConcurrency?: number | undefined; rateLimitMax?: number | undefined }): string[] {
  if (v.shards === 1) return [];
  const split: [string, number | undefined][] = [
    ['EBB_WORKER_CONCURRENCY', v.workerConcurrency],
    ['EBB_QUEUE_GLOBAL_CONCURRENCY', v.globalConcurrency],
    ['EBB_QUEUE_RATE_LIMIT_MAX', v.rateLimitMax],
  ];
  return split
    .filter(([, value]) => value !== undefined && value < v.shards)
    .map(([name, value]) => `${name} (${value}) must be at least EBB_QUEUE_SHARDS (${v.shards}): it is split across the shards, and each needs at least 1`);
}

/** The queue config out of the parsed settings of any table that includes QUEUE_SETTINGS. */
export function queueConfigOf(v: Values<typeof QUEUE_SETTINGS.entries>): QueueConfig {
  return frozen({
    redis: redisTargetOfSettings(v),
    redisCommandTimeoutMs: v.redisCommandTimeout,
    prefix: v.prefix,
    shards: v.shards,
    workerConcurrency: v.workerConcurrency,
    globalConcurrency: v.globalConcurrency,
    globalRateLimit: v.rateLimitMax === undefined ? undefined : { max: v.rateLimitMax, durationMs: v.rateLimitDuration },
    lockDurationMs: v.lockDuration,
    removeOnComplete: v.removeOnComplete,
    removeOnFail: v.removeOnFail,
    attempts: v.attempts,
    backoff: { baseMs: v.backoffBase, capMs: v.backoffMax },
    resyncPeriodMs: v.resyncPeriod,
    fairness: v.fairness,
  });
}

/** The queue settings alone (tests and tools); processes parse their whole table. Throws one ConfigError. */
export function parseQueueConfig(env: Env): QueueConfig {
  return queueConfigOf(parseSettings(QUEUE_SETTINGS, env));
}
