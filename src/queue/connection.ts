import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions } from 'ioredis';
import { backoffMs } from '../common/backoff.ts';
import { repeatGate, type Logger } from '../common/log.ts';
import { ConfigError } from '../common/config-error.ts';
import { redactUrl } from '../common/settings-types.ts';

/** Where Redis is, parsed from a `redis://` or `rediss://` URL. Holds the password: never log it. */
export interface RedisTarget {
  host: string;
  port: number;
  username: string | undefined;
  password: string | undefined;
  db: number;
  tls: boolean;
}

/** The URL with any password replaced by `***`, safe for logs and error messages. */
export const redactRedisUrl: (url: string) => string = redactUrl;

/** The target of a Redis URL, or why the URL is refused. */
function readRedisUrl(url: string): RedisTarget | { problem: string } {
  if (!URL.canParse(url)) return { problem: 'not a URL; expected redis://[user:password@]host[:port][/db]' };
  const u = new URL(url);
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') return { problem: `unsupported scheme ${JSON.stringify(u.protocol)}; use redis: or rediss:` };
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) return { problem: 'missing host' };
  const dbText = u.pathname.replace(/^\//, '');
  if (dbText !== '' && !/^\d{1,2}$/.test(dbText)) return { problem: `database ${JSON.stringify(dbText)} is not a number` };
  if (u.search || u.hash) return { problem: 'query parameters and fragments are not supported' };
  return {
    host,
    port: u.port === '' ? 6379 : Number(u.port),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: dbText === '' ? 0 : Number(dbText),
    tls: u.protocol === 'rediss:',
  };
}

/** Why a Redis URL is refused (worded for a ConfigError), or undefined when it is valid. */
export function redisUrlProblem(url: string): string | undefined {
  const t = readRedisUrl(url);
  return 'problem' in t ? t.problem : undefined;
}

/** Parses a Redis URL; throws ConfigError naming `setting` (the URL in the message is redacted). */
export function parseRedisUrl(url: string, setting = 'Redis URL'): RedisTarget {
  const t = readRedisUrl(url);
  if ('problem' in t) throw new ConfigError([`${setting}: ${t.problem} (got ${JSON.stringify(redactRedisUrl(url))})`]);
  return t;
}

export interface RedisConnectionOptions {
  /**
   * Workers, QueueEvents and any blocking reader: commands wait through reconnects forever
   * (`maxRetriesPerRequest: null`, which BullMQ requires for blocking connections). Producers (false): a
   * command waits through a short outage, then fails, so callers never pile up behind a dead Redis.
   */
  forWorker: boolean;
  /** PEM file of the CA that signed the server's certificate (a `rediss://` URL); default: the system's CAs. */
  caFile?: string | undefined;
  /** Shown in `CLIENT LIST`; helps on-call people find who is connected. */
  name?: string;
  log?: Logger;
  /** Called each time the connection is ready again after it was lost (Redis back, maybe empty); not at the first connect. */
  onRestored?: () => void;
}

const RECONNECT_BASE_MS = 100;
const RECONNECT_CAP_MS = 5_000;
const PRODUCER_RETRIES_PER_REQUEST = 3;

/** The CA bundle of a `rediss://` connection; a file that cannot be read is a ConfigError, at start. */
function readCa(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError([`EBB_REDIS_CA_FILE: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`]);
  }
}

/** ioredis options for a URL; exported for tests and for callers that must build the client themselves. */
export function redisOptions(url: string, opts: RedisConnectionOptions): RedisOptions {
  const t = parseRedisUrl(url);
  return {
    host: t.host,
    port: t.port,
    username: t.username,
    password: t.password,
    db: t.db,
    ...(t.tls ? { tls: { servername: t.host, ...(opts.caFile === undefined ? {} : { ca: readCa(opts.caFile) }) } } : {}),
    connectionName: opts.name,
    maxRetriesPerRequest: opts.forWorker ? null : PRODUCER_RETRIES_PER_REQUEST,
    // Commands issued while reconnecting are queued (bounded by maxRetriesPerRequest for producers).
    enableOfflineQueue: true,
    // Capped exponential backoff with jitter; never gives up (Redis coming back is the normal case).
    retryStrategy: (times: number) => backoffMs(times, RECONNECT_BASE_MS, RECONNECT_CAP_MS),
  };
}

/**
 * An ioredis client for BullMQ. The caller owns it (BullMQ does not close a connection it was given): close
 * it with `quit()` after closing the queues and workers that use it.
 */
export function redisConnection(url: string, opts: RedisConnectionOptions): Redis {
  const client = new Redis(redisOptions(url, opts));
  const target = redactRedisUrl(url);
  const errors = repeatGate();
  let failing = false;
  // Always listen: an 'error' without a listener is printed by ioredis with no structure.
  client.on('error', (err: Error) => {
    failing = true;
    if (errors.pass(err.message) === undefined) return;
    opts.log?.warn({ redis: target, connection: opts.name, err: err.message }, 'redis connection error');
  });
  // Ready again after a close (with or without errors in between, however short): a reconnect.
  let readyBefore = false;
  let closed = false;
  client.on('close', () => {
    closed = true;
  });
  client.on('ready', () => {
    const reconnect = readyBefore && closed;
    readyBefore = true;
    closed = false;
    if (reconnect) opts.onRestored?.();
    if (!failing) return;
    failing = false;
    errors.reset();
    opts.log?.info({ redis: target, connection: opts.name }, 'redis connection restored');
  });
  return client;
}
