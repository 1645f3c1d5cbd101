import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  KEEPALIVE_INITIAL_DELAY_MS,
  clusterOptions,
  parseRedisUrl,
  redactRedisUrl,
  redisConnection,
  redisOptions,
} from './connection.ts';
import { ConfigError } from '../common/config-error.ts';

describe('parseRedisUrl', () => {
  it.each([
    ['redis://127.0.0.1:6380', { host: '127.0.0.1', port: 6380, db: 0, tls: false, username: undefined, password: undefined }],
    ['redis://redis.ebb-system.svc', { host: 'redis.ebb-system.svc', port: 6379, db: 0, tls: false, username: undefined, password: undefined }],
    ['rediss://user:p%40ss@cache:6390/2', { host: 'cache', port: 6390, db: 2, tls: true, username: 'user', password: 'p@ss' }],
    ['redis://:secret@[::1]:7000', { host: '::1', port: 7000, db: 0, tls: false, username: undefined, password: 'secret' }],
  ])('parses %s', (url, expected) => {
    expect(parseRedisUrl(url)).toEqual(expected);
  });

  it.each([['not a url'], ['http://127.0.0.1:6379'], ['redis://host/abc'], ['redis://host:6379?db=1'], ['redis://:hunter2@host/db']])(
    'rejects %j with a ConfigError that never shows the password',
    (url) => {
      let caught: unknown;
      try {
        parseRedisUrl(url, 'EBB_REDIS_URL');
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect((caught as Error).message).toContain('EBB_REDIS_URL');
      expect((caught as Error).message).not.toContain('hunter2');
    },
  );
});

describe('redactRedisUrl', () => {
  it.each([
    ['redis://:secret@host:6379/1', 'redis://:***@host:6379/1'],
    ['redis://user:secret@host', 'redis://user:***@host'],
    ['redis://host:6379', 'redis://host:6379'],
    ['garbage secret@host', '***@host'],
  ])('redacts %s', (url, expected) => {
    expect(redactRedisUrl(url)).toBe(expected);
  });
});

describe('redisOptions', () => {
  it('waits forever on worker connections and gives producers a bounded wait', () => {
    expect(redisOptions('redis://h', { forWorker: true }).maxRetriesPerRequest).toBeNull();
    expect(redisOptions('redis://h', { forWorker: false }).maxRetriesPerRequest).toBeGreaterThan(0);
  });

  it('bounds the commands of every connection and keeps TCP keepalive on each', () => {
    const producer = redisOptions('redis://h', { forWorker: false, commandTimeoutMs: 2_500 });
    expect(producer).toMatchObject({ commandTimeout: 2_500, keepAlive: KEEPALIVE_INITIAL_DELAY_MS });
    expect(redisOptions('redis://h', { forWorker: false }).commandTimeout).toBe(DEFAULT_COMMAND_TIMEOUT_MS);
    const worker = redisOptions('redis://h', { forWorker: true, commandTimeoutMs: 2_500 });
    expect(worker).toMatchObject({ commandTimeout: 2_500, keepAlive: KEEPALIVE_INITIAL_DELAY_MS });
    expect(redisOptions('redis://h', { forWorker: true }).commandTimeout).toBe(DEFAULT_COMMAND_TIMEOUT_MS);
  });

  it('reconnects with a capped backoff and never gives up', () => {
    const retry = redisOptions('redis://h', { forWorker: true }).retryStrategy!;
    const delays = [1, 2, 5, 10, 100, 10_000].map((n) => retry(n));
    for (const d of delays) {
      expect(typeof d).toBe('number');
      expect(d as number).toBeGreaterThanOrEqual(100);
      expect(d as number).toBeLessThanOrEqual(5_000);
    }
  });

  it('verifies a rediss:// server with the CA file when one is set, and refuses a file it cannot read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ebb-ca-'));
    try {
      const ca = join(dir, 'ca.pem');
      writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
      const tls = redisOptions('rediss://redis.ebb-system.svc', { forWorker: false, caFile: ca }).tls;
      expect(tls?.servername).toBe('redis.ebb-system.svc');
      expect(String(tls?.ca)).toContain('BEGIN CERTIFICATE');
      expect(redisOptions('rediss://r', { forWorker: false }).tls).toEqual({ servername: 'r' });
      expect(redisOptions('redis://r', { forWorker: false, caFile: ca }).tls).toBeUndefined();
      expect(() => redisOptions('rediss://r', { forWorker: false, caFile: join(dir, 'missing.pem') })).toThrow(/EBB_REDIS_CA_FILE: cannot read .*ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('options of the Sentinel and Cluster modes', () => {
  const auth = { username: 'ebb', password: 'pw' };
  const sentinel = {
    mode: 'sentinel',
    sentinels: [{ host: 's1', port: 26379 }],
    masterName: 'ebb',
    sentinelAuth: { username: undefined, password: 'spw' },
    auth,
    tls: undefined,
  } as const;
  const cluster = { mode: 'cluster', nodes: [{ host: 'r1', port: 7000 }], auth, tls: { caFile: undefined, servername: 'redis.example.org' } } as const;

  it('asks the sentinels for the primary, with both credentials, and keeps the worker/producer distinction', () => {
    const o = redisOptions(sentinel, { forWorker: true, name: 'w' });
    expect(o).toMatchObject({ sentinels: [{ host: 's1', port: 26379 }], name: 'ebb', username: 'ebb', password: 'pw', sentinelPassword: 'spw' });
    expect(o.maxRetriesPerRequest).toBeNull();
    expect(o.tls).toBeUndefined();
    expect(redisOptions(sentinel, { forWorker: false }).maxRetriesPerRequest).toBeGreaterThan(0);
    const tls = redisOptions({ ...sentinel, tls: { caFile: undefined, servername: 'redis.example.org' } }, { forWorker: false });
    expect(tls).toMatchObject({ enableTLSForSentinelMode: true, tls: { servername: 'redis.example.org' }, sentinelTLS: { servername: 'redis.example.org' } });
  });

  it('puts the per-node options where BullMQ reads them for a Cluster', () => {
    const o = clusterOptions(cluster, { forWorker: true });
    expect(o.redisOptions).toMatchObject({ username: 'ebb', password: 'pw', maxRetriesPerRequest: null, tls: { servername: 'redis.example.org' } });
    expect(clusterOptions(cluster, { forWorker: false }).redisOptions?.maxRetriesPerRequest).toBeGreaterThan(0);
    expect(clusterOptions({ ...cluster, tls: undefined }, { forWorker: false }).redisOptions?.tls).toBeUndefined();
    expect(clusterOptions(cluster, { forWorker: false, commandTimeoutMs: 900 }).redisOptions).toMatchObject({ commandTimeout: 900, keepAlive: 30_000 });
    expect(clusterOptions(cluster, { forWorker: true, commandTimeoutMs: 900 }).redisOptions?.commandTimeout).toBe(900);
  });
});

describe('the copies BullMQ makes of a connection for its blocking reads', () => {
  // Nothing listens on port 1: the clients never connect, only their options are read.
  it('drop the command deadline of a worker connection, standalone and Cluster, and keep everything else', () => {
    const worker = redisConnection('redis://127.0.0.1:1', { forWorker: true, commandTimeoutMs: 900 });
    const producer = redisConnection('redis://127.0.0.1:1', { forWorker: false, commandTimeoutMs: 900 });
    const cluster = redisConnection(
      { mode: 'cluster', nodes: [{ host: '127.0.0.1', port: 1 }], auth: { username: undefined, password: undefined }, tls: undefined },
      { forWorker: true, commandTimeoutMs: 900 },
    ) as Cluster;
    // As BullMQ asks: a Redis copy with a name; a Cluster copy with its node options and a name.
    const copies = [
      worker.duplicate({ connectionName: 'blocking' }),
      producer.duplicate({ connectionName: 'blocking' }),
      cluster.duplicate(undefined, { redisOptions: { ...cluster.options.redisOptions, connectionName: 'blocking' } }),
    ] as const;
    try {
      expect(worker.options.commandTimeout).toBe(900);
      expect(copies[0].options).toMatchObject({ connectionName: 'blocking', maxRetriesPerRequest: null, keepAlive: KEEPALIVE_INITIAL_DELAY_MS });
      expect(copies[0].options.commandTimeout).toBeUndefined();
      expect(copies[1].options.commandTimeout).toBe(900);
      expect(cluster.options.redisOptions?.commandTimeout).toBe(900);
      expect(copies[2].options.redisOptions).toMatchObject({ connectionName: 'blocking', maxRetriesPerRequest: null });
      expect(copies[2].options.redisOptions?.commandTimeout).toBeUndefined();
    } finally {
      for (const c of [worker, producer, cluster, ...copies]) c.disconnect();
    }
  });
});
