import { describe, expect, it } from 'vitest';
import { parseQueueConfig } from './settings.ts';
import { configProblems } from '../common/config-error.ts';

function problemsOf(env: Record<string, string | undefined>): readonly string[] {
  return configProblems(() => parseQueueConfig(env));
}

describe('parseQueueConfig', () => {
  it('has defaults for everything and returns a frozen object', () => {
    const cfg = parseQueueConfig({});
    expect(cfg).toEqual({
      redis: { mode: 'standalone', host: '127.0.0.1', port: 6379, db: 0, auth: { username: undefined, password: undefined }, tls: undefined },
      redisCommandTimeoutMs: 10_000,
      prefix: '{ebb}',
      shards: 1,
      workerConcurrency: 8,
      globalConcurrency: undefined,
      globalRateLimit: undefined,
      lockDurationMs: 30_000,
      removeOnComplete: 1000,
      removeOnFail: 5000,
      attempts: 20,
      backoff: { baseMs: 1_000, capMs: 300_000 },
      resyncPeriodMs: 600_000,
      fairness: 'namespace',
    });
    expect(Object.isFrozen(cfg)).toBe(true);
    expect(Object.isFrozen(cfg.backoff)).toBe(true);
    expect(Object.isFrozen(parseQueueConfig({ EBB_QUEUE_RATE_LIMIT_MAX: '5' }).globalRateLimit)).toBe(true);
  });

  it.each<[Record<string, string>, Record<string, unknown>]>([
    [{ EBB_WORKER_CONCURRENCY: '32' }, { workerConcurrency: 32 }],
    [{ EBB_QUEUE_GLOBAL_CONCURRENCY: '100' }, { globalConcurrency: 100 }],
    [{ EBB_QUEUE_RATE_LIMIT_MAX: '50' }, { globalRateLimit: { max: 50, durationMs: 1_000 } }],
    [{ EBB_QUEUE_RATE_LIMIT_MAX: '50', EBB_QUEUE_RATE_LIMIT_DURATION: '500ms' }, { globalRateLimit: { max: 50, durationMs: 500 } }],
    [{ EBB_QUEUE_LOCK_DURATION: '2m' }, { lockDurationMs: 120_000 }],
    [
      { EBB_QUEUE_REMOVE_ON_COMPLETE: '0', EBB_QUEUE_REMOVE_ON_FAIL: '10' },
      { removeOnComplete: 0, removeOnFail: 10 },
    ],
    [{ EBB_QUEUE_ATTEMPTS: '1' }, { attempts: 1 }],
    [{ EBB_QUEUE_BACKOFF_BASE: '200ms', EBB_QUEUE_BACKOFF_MAX: '1m' }, { backoff: { baseMs: 200, capMs: 60_000 } }],
    [{ EBB_RESYNC_PERIOD: '0' }, { resyncPeriodMs: 0 }],
    [{ EBB_RESYNC_PERIOD: '1h' }, { resyncPeriodMs: 3_600_000 }],
    [{ EBB_QUEUE_FAIRNESS: 'off' }, { fairness: 'off' }],
    [{ EBB_QUEUE_FAIRNESS: 'namespace' }, { fairness: 'namespace' }],
    [
      { EBB_REDIS_URL: 'rediss://:pw@redis:6380/1' },
      {
        redis: {
          mode: 'standalone',
          host: 'redis',
          port: 6380,
          db: 1,
          auth: { username: undefined, password: 'pw' },
          tls: { caFile: undefined, servername: undefined },
        },
      },
    ],
    [{ EBB_REDIS_URL: 'redis://ebb@redis:6379', EBB_REDIS_PASSWORD: 'f00d' }, { redis: { auth: { username: 'ebb', password: 'f00d' } } }],
    [{ EBB_REDIS_URL: 'redis://ebb:old@redis', EBB_REDIS_PASSWORD: 'p@ss w' }, { redis: { auth: { username: 'ebb', password: 'p@ss w' } } }],
    [{ EBB_REDIS_URL: 'redis://redis', EBB_REDIS_USERNAME: 'ebb' }, { redis: { auth: { username: 'ebb', password: undefined } } }],
    [{ EBB_REDIS_URL: 'rediss://redis', EBB_REDIS_CA_FILE: '/etc/ebb/redis-ca.pem' }, { redis: { tls: { caFile: '/etc/ebb/redis-ca.pem' } } }],
    [{ EBB_QUEUE_PREFIX: '{ebb-staging}' }, { prefix: '{ebb-staging}' }],
    [{ EBB_WORKER_CONCURRENCY: ' 4 ' }, { workerConcurrency: 4 }],
    [{ EBB_WORKER_CONCURRENCY: '' }, { workerConcurrency: 8 }],
    [{ EBB_QUEUE_SHARDS: '3' }, { shards: 3, prefix: '{ebb}' }],
    [{ EBB_QUEUE_SHARDS: '8', EBB_WORKER_CONCURRENCY: '8', EBB_QUEUE_GLOBAL_CONCURRENCY: '8', EBB_QUEUE_RATE_LIMIT_MAX: '8' }, { shards: 8 }],
  ])('reads %j', (env, expected) => {
    expect(parseQueueConfig(env)).toMatchObject(expected);
  });

  it.each<[Record<string, string>, string]>([
    [{ EBB_WORKER_CONCURRENCY: '0' }, 'EBB_WORKER_CONCURRENCY: must be an integer from 1 to 1000 (got "0")'],
    [{ EBB_WORKER_CONCURRENCY: 'lots' }, 'EBB_WORKER_CONCURRENCY: must be an integer from 1 to 1000 (got "lots")'],
    [{ EBB_WORKER_CONCURRENCY: '2.5' }, 'EBB_WORKER_CONCURRENCY: must be an integer from 1 to 1000 (got "2.5")'],
    [{ EBB_QUEUE_GLOBAL_CONCURRENCY: '-1' }, 'EBB_QUEUE_GLOBAL_CONCURRENCY: must be an integer from 1 to 100000 (got "-1")'],
    [
      { EBB_QUEUE_RATE_LIMIT_DURATION: '1s' },
      'EBB_QUEUE_RATE_LIMIT_DURATION is set but EBB_QUEUE_RATE_LIMIT_MAX is not: set both to enable the global rate limit',
    ],
    [{ EBB_QUEUE_LOCK_DURATION: '30' }, 'EBB_QUEUE_LOCK_DURATION: must be a duration such as 500ms, 30s, 10m or 1h (got "30")'],
    [{ EBB_QUEUE_LOCK_DURATION: '1s' }, 'EBB_QUEUE_LOCK_DURATION: must be between 5s and 10m (got "1s")'],
    [{ EBB_QUEUE_BACKOFF_BASE: '2m', EBB_QUEUE_BACKOFF_MAX: '1m' }, 'EBB_QUEUE_BACKOFF_BASE (2m) must not exceed EBB_QUEUE_BACKOFF_MAX (1m)'],
    [{ EBB_RESYNC_PERIOD: '500ms' }, 'EBB_RESYNC_PERIOD: must be 0 (off) or between 1s and 24h (got "500ms")'],
    [{ EBB_QUEUE_FAIRNESS: 'tenant' }, 'EBB_QUEUE_FAIRNESS: must be one of namespace, off (got "tenant")'],
    [{ EBB_QUEUE_PREFIX: 'ebb' }, 'EBB_QUEUE_PREFIX: must contain a hash tag like {ebb} and no \':\' or spaces (got "ebb")'],
    [{ EBB_REDIS_URL: 'http://x' }, 'EBB_REDIS_URL: unsupported scheme "http:"; use redis: or rediss: (got "http://x")'],
    [{ EBB_REDIS_URL: 'redis//host' }, 'EBB_REDIS_URL: not a URL; expected redis://[user:password@]host[:port][/db] (got "redis//host")'],
    [{ EBB_REDIS_URL: 'redis://:pw@host/x' }, 'EBB_REDIS_URL: database "x" is not a number (got "redis://:***@host/x")'],
    [{ EBB_REDIS_CA_FILE: '/ca.pem' }, 'EBB_REDIS_CA_FILE is set but EBB_REDIS_URL is not a rediss:// (TLS) URL'],
    [{ EBB_REDIS_URL: 'rediss://r', EBB_REDIS_CA_FILE: 'ca.pem' }, 'EBB_REDIS_CA_FILE: must be an absolute path (got "ca.pem")'],
    [{ EBB_QUEUE_SHARDS: '0' }, 'EBB_QUEUE_SHARDS: must be an integer from 1 to 64 (got "0")'],
    [{ EBB_QUEUE_SHARDS: '65' }, 'EBB_QUEUE_SHARDS: must be an integer from 1 to 64 (got "65")'],
    [{ EBB_QUEUE_SHARDS: 'two' }, 'EBB_QUEUE_SHARDS: must be an integer from 1 to 64 (got "two")'],
    [{ EBB_QUEUE_SHARDS: '16' }, 'EBB_WORKER_CONCURRENCY (8) must be at least EBB_QUEUE_SHARDS (16): it is split across the shards, and each needs at least 1'],
    [
      { EBB_QUEUE_SHARDS: '4', EBB_QUEUE_GLOBAL_CONCURRENCY: '3' },
      'EBB_QUEUE_GLOBAL_CONCURRENCY (3) must be at least EBB_QUEUE_SHARDS (4): it is split across the shards, and each needs at least 1',
    ],
    [
      { EBB_QUEUE_SHARDS: '4', EBB_QUEUE_RATE_LIMIT_MAX: '2' },
      'EBB_QUEUE_RATE_LIMIT_MAX (2) must be at least EBB_QUEUE_SHARDS (4): it is split across the shards, and each needs at least 1',
    ],
  ])('rejects %j', (env, problem) => {
    expect(problemsOf(env)).toEqual([problem]);
  });

  it('reports every problem at once', () => {
    const problems = problemsOf({ EBB_WORKER_CONCURRENCY: 'x', EBB_QUEUE_ATTEMPTS: '0', EBB_RESYNC_PERIOD: 'soon' });
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(/EBB_WORKER_CONCURRENCY[\s\S]*EBB_QUEUE_ATTEMPTS|EBB_QUEUE_ATTEMPTS[\s\S]*EBB_WORKER_CONCURRENCY/);
  });

  it('never puts a Redis password into an error', () => {
    const problems = problemsOf({ EBB_REDIS_URL: 'redis://:hunter2@host/notadb' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).not.toContain('hunter2');
    expect(problemsOf({ EBB_REDIS_URL: 'redis://h/x', EBB_REDIS_PASSWORD: 'hunter2' }).join('\n')).not.toContain('hunter2');
  });
});
