import { readFileSync } from 'node:fs';
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { backoffMs } from '../common/backoff.ts';
import { repeatGate, type Logger } from '../common/log.ts';
import { ConfigError } from '../common/config-error.ts';
import { describeRedis, parseRedisUrl, redactRedisUrl, type RedisTarget, type RedisTls } from './redis-target.ts';
import type { RedisReachability } from './reachability.ts';
import { probeRedis } from './redis-probe.ts';

export { parseRedisUrl, redactRedisUrl, redisUrlProblem, type RedisUrlParts } from './redis-target.ts';

/** A client of any mode; BullMQ takes either as a Queue's or Worker's `connection`. */
export type RedisClient = Redis | Cluster;

export interface RedisConnectionOptions {
  /**
   * Workers, QueueEvents and any blocking reader: commands wait through reconnects forever
   * (`maxRetriesPerRequest: null`, which BullMQ requires for blocking connections). Producers (false): a
   * command waits through a short outage, then fails, so callers never pile up behind a dead Redis.
   */
  forWorker: boolean;
  /** For a `rediss://` URL given as a string: PEM file of the CA that signed the server's certificate. */
  caFile?: string | undefined;
  /** Shown in `CLIENT LIST`; helps on-call people find who is connected. */
  name?: string;
  log?: Logger;
  /**
   * Deadline of each command (default DEFAULT_COMMAND_TIMEOUT_MS), on worker connections too: there it bounds
   * the commands a BullMQ Worker sends on the connection it was given (taking, finishing and extending jobs).
   * The copies BullMQ makes of a worker connection for its blocking reads (BZPOPMIN, XREAD BLOCK) get none:
   * ioredis would cut a blocking read at this deadline too, and BullMQ bounds those reads itself.
   */
  commandTimeoutMs?: number | undefined;
  /**
   * Told when the connection is lost and when it is ready again, and of the round trips of a PING the
   * connection sends every `reachability.probeIntervalMs` (for /healthz: a stalled Redis keeps the TCP
   * connection open).
   */
  reachability?: RedisReachability;
  /**
   * Called each time the connection is ready again after it was lost (Redis back, maybe empty; a Sentinel
   * failover to a replica that may be behind; a Cluster that lost a node); not at the first connect.
   */
  onRestored?: () => void;
}

const RECONNECT_BASE_MS = 100;
const RECONNECT_CAP_MS = 5_000;
const PRODUCER_RETRIES_PER_REQUEST = 3;
/** A command without an answer by then fails (a Redis that stalls, a connection that died silently). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 10_000;
/**
 * TCP keepalive's first probe after this much silence on every connection: a peer that vanished (a node
 * lost, a NAT entry dropped) is noticed by the kernel and the client reconnects, blocking connections too.
 */
export const KEEPALIVE_INITIAL_DELAY_MS = 30_000;

/** The CA bundle of a TLS connection; a file that cannot be read is a ConfigError, at start. */
function readCa(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError([`EBB_REDIS_CA_FILE: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`]);
  }
}

/** Node TLS options; `defaultServername` (the host of a standalone URL) when no name is configured. */
function tlsOptions(tls: RedisTls, defaultServername?: string): TlsOptions {
  const servername = tls.servername ?? defaultServername;
  return { ...(servername === undefined ? {} : { servername }), ...(tls.caFile === undefined ? {} : { ca: readCa(tls.caFile) }) };
}

/** The options every node connection shares, whatever the mode. */
function commonOptions(opts: RedisConnectionOptions): RedisOptions {
  return {
    connectionName: opts.name,
    keepAlive: KEEPALIVE_INITIAL_DELAY_MS,
    commandTimeout: opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: opts.forWorker ? null : PRODUCER_RETRIES_PER_REQUEST,
    // Commands issued while reconnecting are queued (bounded by maxRetriesPerRequest for producers).
    enableOfflineQueue: true,
    // Capped exponential backoff with jitter; never gives up (Redis coming back is the normal case).
    retryStrategy: (times: number) => backoffMs(times, RECONNECT_BASE_MS, RECONNECT_CAP_MS),
  };
}

/** The target of a standalone URL (credentials from the URL, TLS from its scheme). */
function urlTarget(url: string, caFile: string | undefined): RedisTarget {
  const u = parseRedisUrl(url);
  const tls = u.tls ? { caFile, servername: undefined } : undefined;
  return { mode: 'standalone', host: u.host, port: u.port, db: u.db, auth: { username: u.username, password: u.password }, tls };
}

/** ioredis options of a standalone or Sentinel target (a URL: standalone); exported for tests. */
export function redisOptions(target: string | RedisTarget, opts: RedisConnectionOptions): RedisOptions {
  const t = typeof target === 'string' ? urlTarget(target, opts.caFile) : target;
  const auth = { username: t.auth.username, password: t.auth.password };
  if (t.mode === 'standalone') {
    return { host: t.host, port: t.port, db: t.db, ...auth, ...(t.tls ? { tls: tlsOptions(t.tls, t.host) } : {}), ...commonOptions(opts) };
  }
  if (t.mode === 'sentinel') {
    const tls = t.tls ? tlsOptions(t.tls) : undefined;
    return {
      sentinels: t.sentinels.map((s) => ({ host: s.host, port: s.port })),
      name: t.masterName,
      ...auth,
      sentinelUsername: t.sentinelAuth.username,
      sentinelPassword: t.sentinelAuth.password,
      ...(tls ? { tls, sentinelTLS: tls, enableTLSForSentinelMode: true } : {}),
      // Asks the sentinels for the new primary as soon as they announce a failover, not at the next error.
      failoverDetector: true,
      sentinelRetryStrategy: (times: number) => backoffMs(times, RECONNECT_BASE_MS, RECONNECT_CAP_MS),
      // A former primary that came back as a replica refuses writes: reconnect (to the primary) and resend.
      reconnectOnError: (err: Error) => (err.message.startsWith('READONLY') ? 2 : false),
      ...commonOptions(opts),
    };
  }
  throw new Error('redisOptions: a Cluster target needs clusterOptions');
}

/** ioredis Cluster options of a Cluster target; exported for tests. */
export function clusterOptions(target: Extract<RedisTarget, { mode: 'cluster' }>, opts: RedisConnectionOptions): ClusterOptions {
  const tls = target.tls ? tlsOptions(target.tls) : undefined;
  return {
    // BullMQ reads maxRetriesPerRequest of a Cluster from here.
    redisOptions: { username: target.auth.username, password: target.auth.password, ...(tls ? { tls } : {}), ...commonOptions(opts) },
    enableOfflineQueue: true,
    // No CLUSTER INFO check before 'ready'. When that check fails (cluster_state:fail while a lost primary's
    // replica is not yet promoted), ioredis reconnects by itself but never settles the promise of the
    // connect() call that started it. BullMQ awaits exactly that promise when it resets a Worker's blocking
    // connection, so the Worker waited forever. Commands sent while the Cluster is down are retried instead
    // (retryDelayOnClusterDown below).
    enableReadyCheck: false,
    // Keeps asking the seed nodes while the whole Cluster is unreachable; never gives up.
    clusterRetryStrategy: (times: number) => backoffMs(times, RECONNECT_BASE_MS, RECONNECT_CAP_MS),
    // A primary lost and its replica promoted: retry the command once the slots moved (CLUSTERDOWN meanwhile).
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
    // With TLS the certificates name the configured hosts, not the IPs CLUSTER SLOTS announces.
    ...(tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
  };
}

/**
 * An ioredis client for BullMQ: a `redis://` URL (standalone) or any target (`QueueConfig.redis`). The caller
 * owns it (BullMQ does not close a connection it was given): close it with `quit()` after closing the queues
 * and workers that use it.
 */
export function redisConnection(url: string, opts: RedisConnectionOptions): Redis;
export function redisConnection(target: RedisTarget, opts: RedisConnectionOptions): RedisClient;
export function redisConnection(target: string | RedisTarget, opts: RedisConnectionOptions): RedisClient {
  if (typeof target !== 'string' && target.mode === 'cluster') {
    const cluster = new Cluster(
      target.nodes.map((n) => ({ host: n.host, port: n.port })),
      clusterOptions(target, opts),
    );
    watch(cluster, describeRedis(target), opts);
    const closed = reviveUnexpectedEnd(cluster, describeRedis(target), opts);
    if (opts.reachability) probeRedis(cluster, opts.reachability, { intervalMs: opts.reachability.probeIntervalMs, closed });
    watchClusterNodes(cluster, opts);
    if (opts.forWorker) blockingCopiesOfCluster(cluster);
    return cluster;
  }
  const client = new Redis(redisOptions(target, opts));
  const described = typeof target === 'string' ? redactRedisUrl(target) : describeRedis(target);
  watch(client, described, opts);
  const closed = reviveUnexpectedEnd(client, described, opts);
  if (opts.reachability) probeRedis(client, opts.reachability, { intervalMs: opts.reachability.probeIntervalMs, closed });
  if (opts.forWorker) blockingCopies(client);
  return client;
}

/**
 * A BullMQ Worker (or QueueEvents) sends its blocking reads on a `duplicate()` of the connection it was given
 * and everything else on that connection. The copies drop the command deadline: BullMQ ends each blocking
 * read itself (a watchdog at the read's own timeout plus a second, which resets the connection), and an
 * ioredis deadline would cut every read longer than it.
 */
function blockingCopies(client: Redis): void {
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (override?: Partial<RedisOptions>) => duplicate({ ...override, commandTimeout: undefined });
}

/** blockingCopies of a Cluster: BullMQ passes the copy's node options as `redisOptions`. */
function blockingCopiesOfCluster(cluster: Cluster): void {
  const duplicate = cluster.duplicate.bind(cluster);
  cluster.duplicate = (nodes?: unknown[], override: Partial<ClusterOptions> = {}) =>
    duplicate(nodes, { ...override, redisOptions: { ...(override.redisOptions ?? cluster.options.redisOptions), commandTimeout: undefined } });
}

/** Logs errors (rate-limited) and recoveries; calls onRestored when ready again after a close. */
function watch(client: RedisClient, target: string, opts: RedisConnectionOptions): void {
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
    opts.reachability?.lost();
  });
  client.on('ready', () => {
    opts.reachability?.ready();
    const reconnect = readyBefore && closed;
    readyBefore = true;
    closed = false;
    if (reconnect) opts.onRestored?.();
    if (!failing) return;
    failing = false;
    errors.reset();
    opts.log?.info({ redis: target, connection: opts.name }, 'redis connection restored');
  });
}

/** The two ways an owner closes a client; `disconnect(true)` is a reconnect, not a close. */
interface Closable {
  quit(...args: unknown[]): unknown;
  disconnect(reconnect?: boolean): unknown;
}

/**
 * Connects again a client that ended (status 'end') without its owner closing it. ioredis ends a client for
 * good, every later command failing with "Connection is closed.", when its connector abandons a connection
 * attempt that was under way: in Sentinel mode the failover detector of the connection that was lost does
 * that when the sentinels announce the new primary while the client is still asking a sentinel where the
 * primary is. The client never comes back by itself, and a BullMQ Worker whose connection it is stops taking
 * jobs. Nothing closes a client but `quit()` and `disconnect()`, so an end that neither preceded is logged and
 * repaired: the client connects again after the usual reconnect backoff (and reports itself restored).
 * Returns whether the owner closed the client.
 */
function reviveUnexpectedEnd(client: RedisClient, target: string, opts: RedisConnectionOptions): () => boolean {
  let closedByOwner = false;
  let revivals = 0;
  const c = client as unknown as Closable;
  const quit = c.quit.bind(client);
  const disconnect = c.disconnect.bind(client);
  c.quit = (...args: unknown[]) => {
    closedByOwner = true;
    return quit(...args);
  };
  c.disconnect = (reconnect = false) => {
    if (!reconnect) closedByOwner = true;
    return disconnect(reconnect);
  };
  client.on('ready', () => {
    revivals = 0;
  });
  client.on('end', () => {
    if (closedByOwner) return;
    const delayMs = backoffMs(++revivals, RECONNECT_BASE_MS, RECONNECT_CAP_MS);
    opts.log?.warn({ redis: target, connection: opts.name, delayMs }, 'redis connection ended without being closed; connecting again');
    setTimeout(() => {
      if (!closedByOwner && client.status === 'end') client.connect().catch(() => undefined);
    }, delayMs);
  });
  return () => closedByOwner;
}

/**
 * A Cluster stays 'ready' while one primary fails over to its replica (which may be behind): a slot map whose
 * primaries changed counts as a restoration too. Only the change counts, not every refresh: the client keeps
 * retrying a dead node (each retry an error and a refresh) until the Cluster forgets it.
 */
function watchClusterNodes(cluster: Cluster, opts: RedisConnectionOptions): void {
  let primaries: string | undefined;
  cluster.on('refresh', () => {
    const now = cluster
      .nodes('master')
      .map((n) => `${n.options.host ?? ''}:${n.options.port ?? ''}`)
      .sort()
      .join(',');
    const changed = primaries !== undefined && now !== primaries;
    primaries = now;
    if (changed) opts.onRestored?.();
  });
}
