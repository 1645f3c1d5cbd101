import { formatDuration, parseDuration } from '../common/duration.ts';
import { parseRedisUrl, redactRedisUrl } from './connection.ts';
import { ConfigError } from './errors.ts';
import { KEY_PREFIX } from './names.ts';

/** The queue part of a process's configuration: validated once, frozen, passed down. */
export interface QueueConfig {
  /** Holds credentials when Redis needs them: log `redactRedisUrl(redisUrl)`, never this. */
  readonly redisUrl: string;
  /** BullMQ key prefix; must contain a `{hash tag}` so all keys share one Redis Cluster slot. */
  readonly prefix: string;
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
  /** The watcher re-enqueues every known object this often (at low priority); 0 disables resync. */
  readonly resyncPeriodMs: number;
}

type Env = Record<string, string | undefined>;

interface IntSpec {
  name: string;
  min: number;
  max: number;
}

/** Every environment variable the queue config reads, with its default (undefined = unset by default). */
export const QUEUE_ENV = {
  redisUrl: { name: 'EBB_REDIS_URL', default: 'redis://127.0.0.1:6379' },
  prefix: { name: 'EBB_QUEUE_PREFIX', default: KEY_PREFIX },
  workerConcurrency: { name: 'EBB_WORKER_CONCURRENCY', default: '8' },
  globalConcurrency: { name: 'EBB_QUEUE_GLOBAL_CONCURRENCY', default: undefined },
  rateLimitMax: { name: 'EBB_QUEUE_RATE_LIMIT_MAX', default: undefined },
  rateLimitDuration: { name: 'EBB_QUEUE_RATE_LIMIT_DURATION', default: '1s' },
  lockDuration: { name: 'EBB_QUEUE_LOCK_DURATION', default: '30s' },
  removeOnComplete: { name: 'EBB_QUEUE_REMOVE_ON_COMPLETE', default: '1000' },
  removeOnFail: { name: 'EBB_QUEUE_REMOVE_ON_FAIL', default: '5000' },
  attempts: { name: 'EBB_QUEUE_ATTEMPTS', default: '20' },
  backoffBase: { name: 'EBB_QUEUE_BACKOFF_BASE', default: '1s' },
  backoffMax: { name: 'EBB_QUEUE_BACKOFF_MAX', default: '5m' },
  resyncPeriod: { name: 'EBB_RESYNC_PERIOD', default: '10m' },
} as const;

/**
 * Parses and validates the queue settings from an environment map (each process's config.ts passes its
 * environment). Throws one ConfigError that lists every problem.
 */
export function parseQueueConfig(env: Env): QueueConfig {
  const problems: string[] = [];
  const p = new Reader(env, problems);
  const E = QUEUE_ENV;

  const redisUrl = p.text(E.redisUrl.name, E.redisUrl.default);
  try {
    parseRedisUrl(redisUrl, E.redisUrl.name);
  } catch (err) {
    problems.push(...(err instanceof ConfigError ? err.problems : [`${E.redisUrl.name}: ${redactRedisUrl(redisUrl)} is invalid`]));
  }
  const prefix = p.text(E.prefix.name, E.prefix.default);
  if (!/^[^:\s]*\{[^{}:\s]+\}[^:\s]*$/.test(prefix)) problems.push(`${E.prefix.name}: must contain a hash tag like {ebb} and no ':' or spaces (got ${JSON.stringify(prefix)})`);
  const resyncPeriodMs = p.duration(E.resyncPeriod.name, E.resyncPeriod.default, 0, 24 * 3_600_000);
  if (resyncPeriodMs > 0 && resyncPeriodMs < 1_000) problems.push(`${E.resyncPeriod.name}: must be 0 (disabled) or at least 1s`);

  const config: QueueConfig = {
    redisUrl,
    prefix,
    workerConcurrency: p.int({ name: E.workerConcurrency.name, min: 1, max: 1_000 }, E.workerConcurrency.default) ?? 1,
    globalConcurrency: p.int({ name: E.globalConcurrency.name, min: 1, max: 100_000 }, undefined),
    globalRateLimit: readRateLimit(p, env, problems),
    lockDurationMs: p.duration(E.lockDuration.name, E.lockDuration.default, 5_000, 600_000),
    removeOnComplete: p.int({ name: E.removeOnComplete.name, min: 0, max: 1_000_000 }, E.removeOnComplete.default) ?? 0,
    removeOnFail: p.int({ name: E.removeOnFail.name, min: 0, max: 1_000_000 }, E.removeOnFail.default) ?? 0,
    attempts: p.int({ name: E.attempts.name, min: 1, max: 1_000 }, E.attempts.default) ?? 1,
    backoff: readBackoff(p, problems),
    resyncPeriodMs,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

function readRateLimit(p: Reader, env: Env, problems: string[]): QueueConfig['globalRateLimit'] {
  const E = QUEUE_ENV;
  const max = p.int({ name: E.rateLimitMax.name, min: 1, max: 1_000_000 }, undefined);
  const durationMs = p.duration(E.rateLimitDuration.name, E.rateLimitDuration.default, 1, 3_600_000);
  if (max === undefined && (env[E.rateLimitDuration.name]?.trim() ?? '') !== '') {
    problems.push(`${E.rateLimitDuration.name} is set but ${E.rateLimitMax.name} is not: set both to enable the global rate limit`);
  }
  return max === undefined ? undefined : Object.freeze({ max, durationMs });
}

function readBackoff(p: Reader, problems: string[]): QueueConfig['backoff'] {
  const E = QUEUE_ENV;
  const baseMs = p.duration(E.backoffBase.name, E.backoffBase.default, 1, 3_600_000);
  const capMs = p.duration(E.backoffMax.name, E.backoffMax.default, 1, 24 * 3_600_000);
  if (baseMs > capMs) problems.push(`${E.backoffBase.name} (${formatDuration(baseMs)}) must not exceed ${E.backoffMax.name} (${formatDuration(capMs)})`);
  return Object.freeze({ baseMs, capMs });
}

/** Reads one variable at a time, collecting problems instead of throwing at the first. */
class Reader {
  private readonly env: Env;
  private readonly problems: string[];
  constructor(env: Env, problems: string[]) {
    this.env = env;
    this.problems = problems;
  }

  /** The trimmed value, or the default when unset or empty. */
  text(name: string, fallback: string): string {
    const raw = this.env[name]?.trim();
    return raw === undefined || raw === '' ? fallback : raw;
  }

  int(spec: IntSpec, fallback: string | undefined): number | undefined {
    const raw = this.env[spec.name]?.trim();
    const text = raw === undefined || raw === '' ? fallback : raw;
    if (text === undefined) return undefined;
    const value = /^-?\d+$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(value) || value < spec.min || value > spec.max) {
      this.problems.push(`${spec.name}: must be an integer from ${spec.min} to ${spec.max} (got ${JSON.stringify(text)})`);
      return spec.min;
    }
    return value;
  }

  duration(name: string, fallback: string, minMs: number, maxMs: number): number {
    const text = this.text(name, fallback);
    const ms = parseDuration(text);
    if (ms === undefined) {
      this.problems.push(`${name}: must be a duration such as 500ms, 30s, 10m or 1h (got ${JSON.stringify(text)})`);
      return minMs;
    }
    if (ms < minMs || ms > maxMs) {
      this.problems.push(`${name}: must be between ${formatDuration(minMs)} and ${formatDuration(maxMs)} (got ${JSON.stringify(text)})`);
      return minMs;
    }
    return ms;
  }
}

/**
 * For process config parsers that validate more than the queue: returns the queue config, or undefined with
 * its problems appended to `problems`, so the process reports every problem at once.
 */
export function readQueueConfig(env: Env, problems: string[]): QueueConfig | undefined {
  try {
    return parseQueueConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
    return undefined;
  }
}
