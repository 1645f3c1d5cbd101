import { describe, expect, it } from 'vitest';
import { configProblems } from '../common/config-error.ts';
import { describeRedis } from './redis-target.ts';
import { parseQueueConfig } from './settings.ts';

const SENTINEL = { EBB_REDIS_MODE: 'sentinel', EBB_REDIS_SENTINELS: 's1:26379, s2:26379,[::1]:26380', EBB_REDIS_SENTINEL_MASTER: 'ebb' };
const CLUSTER = { EBB_REDIS_MODE: 'cluster', EBB_REDIS_CLUSTER_NODES: 'r1:7000,r2:7001' };

function problemsOf(env: Record<string, string>): readonly string[] {
  return configProblems(() => parseQueueConfig(env));
}

describe('Redis connection modes', () => {
  it('reads a Sentinel target with the ACL user, both passwords and TLS', () => {
    const env = {
      ...SENTINEL,
      EBB_REDIS_USERNAME: 'ebb',
      EBB_REDIS_PASSWORD: 'data-pw',
      EBB_REDIS_SENTINEL_USERNAME: 'watch',
      EBB_REDIS_SENTINEL_PASSWORD: 'sentinel-pw',
      EBB_REDIS_TLS: 'true',
      EBB_REDIS_TLS_SERVERNAME: 'redis.example.org',
      EBB_REDIS_CA_FILE: '/etc/ebb/ca.pem',
    };
    const { redis } = parseQueueConfig(env);
    expect(redis).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      masterName: 'ebb',
      auth: { username: 'ebb', password: 'data-pw' },
      sentinelAuth: { username: 'watch', password: 'sentinel-pw' },
      tls: { caFile: '/etc/ebb/ca.pem', servername: 'redis.example.org' },
    });
    expect(describeRedis(redis)).toBe('sentinel ebb via s1:26379,s2:26379,[::1]:26380 as ebb (tls)');
    expect(describeRedis(redis)).not.toContain('pw');
  });

  it('reads a Cluster target from its seed nodes', () => {
    const { redis } = parseQueueConfig({ ...CLUSTER, EBB_REDIS_PASSWORD: 'pw' });
    expect(redis).toEqual({
      mode: 'cluster',
      nodes: [
        { host: 'r1', port: 7000 },
        { host: 'r2', port: 7001 },
      ],
      auth: { username: undefined, password: 'pw' },
      tls: undefined,
    });
    expect(describeRedis(redis)).toBe('cluster r1:7000,r2:7001');
  });

  it('keeps EBB_REDIS_URL as the standalone default', () => {
    const { redis } = parseQueueConfig({ EBB_REDIS_URL: 'rediss://ebb:pw@cache:6390/2', EBB_REDIS_TLS_SERVERNAME: 'cache.example.org' });
    expect(redis).toMatchObject({ mode: 'standalone', host: 'cache', port: 6390, db: 2, tls: { servername: 'cache.example.org' } });
    expect(describeRedis(redis)).toBe('rediss://ebb@cache:6390/2');
  });

  it.each<[Record<string, string>, string[]]>([
    [
      { EBB_REDIS_MODE: 'sentinel' },
      ['EBB_REDIS_MODE is sentinel but EBB_REDIS_SENTINELS is not set', 'EBB_REDIS_MODE is sentinel but EBB_REDIS_SENTINEL_MASTER is not set'],
    ],
    [{ EBB_REDIS_MODE: 'cluster' }, ['EBB_REDIS_MODE is cluster but EBB_REDIS_CLUSTER_NODES is not set']],
    [{ EBB_REDIS_MODE: 'replica' }, ['EBB_REDIS_MODE: must be one of standalone, sentinel, cluster (got "replica")']],
    [
      { ...SENTINEL, EBB_REDIS_URL: 'redis://r' },
      ['EBB_REDIS_URL is set but EBB_REDIS_MODE is sentinel: it applies to standalone mode only (set EBB_REDIS_SENTINELS and EBB_REDIS_SENTINEL_MASTER)'],
    ],
    [
      { ...CLUSTER, EBB_REDIS_URL: 'redis://r' },
      ['EBB_REDIS_URL is set but EBB_REDIS_MODE is cluster: it applies to standalone mode only (set EBB_REDIS_CLUSTER_NODES)'],
    ],
    [{ ...CLUSTER, EBB_REDIS_SENTINEL_MASTER: 'ebb' }, ['EBB_REDIS_SENTINEL_MASTER is set but EBB_REDIS_MODE is cluster: it applies to sentinel mode only']],
    [{ ...SENTINEL, EBB_REDIS_CLUSTER_NODES: 'r:7000' }, ['EBB_REDIS_CLUSTER_NODES is set but EBB_REDIS_MODE is sentinel: it applies to cluster mode only']],
    [{ EBB_REDIS_SENTINELS: 's:26379' }, ['EBB_REDIS_SENTINELS is set but EBB_REDIS_MODE is standalone: it applies to sentinel mode only']],
    [{ EBB_REDIS_TLS: 'true' }, ['EBB_REDIS_TLS is set but EBB_REDIS_MODE is standalone: a rediss:// EBB_REDIS_URL turns TLS on in standalone mode']],
    [{ EBB_REDIS_TLS_SERVERNAME: 'r.example.org' }, ['EBB_REDIS_TLS_SERVERNAME is set but EBB_REDIS_URL is not a rediss:// (TLS) URL']],
    [{ ...CLUSTER, EBB_REDIS_CA_FILE: '/ca.pem' }, ['EBB_REDIS_CA_FILE is set but EBB_REDIS_TLS is not true']],
    [{ EBB_REDIS_URL: 'redis://ebb@r', EBB_REDIS_USERNAME: 'other' }, ['EBB_REDIS_USERNAME is set and EBB_REDIS_URL names a user too: name it in one place']],
    [{ ...SENTINEL, EBB_REDIS_SENTINELS: 's1:26379,s2' }, ['EBB_REDIS_SENTINELS: "s2" is not host:port']],
    [{ ...CLUSTER, EBB_REDIS_CLUSTER_NODES: 'r1:0' }, ['EBB_REDIS_CLUSTER_NODES: "r1:0" has no port from 1 to 65535']],
  ])('refuses %j', (env, problems) => {
    expect(problemsOf(env)).toEqual(problems);
  });

  it('never shows the sentinel password in a problem', () => {
    expect(problemsOf({ EBB_REDIS_SENTINEL_PASSWORD: 'hunter2' }).join('\n')).not.toContain('hunter2');
  });
});
