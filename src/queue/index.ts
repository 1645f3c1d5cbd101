/** The queue contract between processes (docs/architecture.md). */
export { KEY_PREFIX, RECONCILE_QUEUE, TIMERS_QUEUE, InvalidKeyError, dedupId, formatKey, keyFromDedupId, parseKey, timerId, validateKey } from './names.ts';
export type { ObjectKey, ObjectKind } from './names.ts';
export { ConfigError } from '../common/config-error.ts';
export { parseRedisUrl, redactRedisUrl, redisConnection, redisOptions, redisUrlProblem } from './connection.ts';
export type { RedisClient, RedisConnectionOptions } from './connection.ts';
export { describeRedis, REDIS_MODES } from './redis-target.ts';
export type { RedisMode, RedisTarget } from './redis-target.ts';
export { QUEUE_SETTINGS, parseQueueConfig, queueConfigOf } from './settings.ts';
export type { QueueConfig } from './settings.ts';
export { formatDuration, parseDuration } from '../common/duration.ts';
export {
  connectionOf,
  createReconcileQueue,
  createReconcileQueues,
  createTimersQueue,
  createTimersQueues,
  shardOfQueue,
  reconcileJobOptions,
  reconcileWorkerOptions,
  timerJobOptions,
  timersWorkerOptions,
} from './queues.ts';
export type { ReconcileQueue, TimersQueue } from './queues.ts';
export { MAX_PRIORITY, RESYNC_PRIORITY, enqueue } from './enqueue.ts';
export { DEFAULT_FAIRNESS_POLICY, FAIRNESS_MODES, TenantRates, tenantTier } from './fairness.ts';
export type { Fairness, FairnessPolicy } from './fairness.ts';
export type { EnqueueOptions, EnqueueResult } from './enqueue.ts';
export { cancelTimer, processTimer, setTimer } from './timers.ts';
export type { SetTimerResult, TimerData } from './timers.ts';
export {
  DEFAULT_RETRY_POLICY,
  RECONCILE_BACKOFF_TYPE,
  RETRY_AFTER_GIVING_UP,
  backoffStrategy,
  retryAfterGivingUp,
  retryDecision,
  toJobError,
  withRetryPolicy,
} from './retry.ts';
export type { RetryDecision, RetryPolicy } from './retry.ts';
export { QUEUE_STATES, queueCounts, registerQueueMetrics } from './metrics.ts';
export type { CountableQueue, QueueState } from './metrics.ts';
export { dueSoonBacklog, shardedBacklog, sumBacklogs } from './backlog.ts';
export type { Backlog, BacklogQueue, ShardedBacklog } from './backlog.ts';
export { MAX_SHARDS, clusterSlot, forKey, shardOf, shardOfKey, shardPrefix, shardPrefixes, splitEvenly } from './shards.ts';
export { applyLimitsWithOverrides, applyQueueKnobs, applyShardedKnobs, shardLimits } from './knobs.ts';
export { decodeOverrides, effectiveLimits, encodeOverride, overridesKey, readOverrides, withLimitsLock, writeOverride } from './overrides.ts';
export type { LimitName, LimitOverrides, Limits, RateLimit } from './overrides.ts';
export type { AppliedKnobs, KnobbedQueue } from './knobs.ts';
