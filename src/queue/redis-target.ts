import { ConfigError } from '../common/config-error.ts';
import { redactUrl } from '../common/settings-types.ts';

/** Where Redis is, parsed from a `redis://` or `rediss://` URL. Holds the password: never log it. */
export interface RedisUrlParts {
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
function readRedisUrl(url: string): RedisUrlParts | { problem: string } {
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
export function parseRedisUrl(url: string, setting = 'Redis URL'): RedisUrlParts {
  const t = readRedisUrl(url);
  if ('problem' in t) throw new ConfigError([`${setting}: ${t.problem} (got ${JSON.stringify(redactRedisUrl(url))})`]);
  return t;
}

/** The ways ebb finds Redis: one server, a primary discovered through Sentinel, or a Redis Cluster. */
export const REDIS_MODES = ['standalone', 'sentinel', 'cluster'] as const;
export type RedisMode = (typeof REDIS_MODES)[number];

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** An ACL user and its password; both optional (no AUTH, or the `default` user with a password). Never log it. */
export interface RedisAuth {
  readonly username: string | undefined;
  readonly password: string | undefined;
}

/** TLS towards every Redis node (and every sentinel): the CA that signed their certificates and the name they carry. */
export interface RedisTls {
  /** PEM file; undefined: the system's CAs. */
  readonly caFile: string | undefined;
  /** The name the certificates must carry; undefined: the host connected to. */
  readonly servername: string | undefined;
}

interface Common {
  readonly auth: RedisAuth;
  /** undefined: plain TCP. */
  readonly tls: RedisTls | undefined;
}

/** Where Redis is and how to talk to it; holds credentials: log `describeRedis(target)`, never this. */
export type RedisTarget =
  | (Common & { readonly mode: 'standalone'; readonly host: string; readonly port: number; readonly db: number })
  | (Common & {
      readonly mode: 'sentinel';
      readonly sentinels: readonly HostPort[];
      /** The name the sentinels monitor the primary under (`sentinel monitor <name> …`). */
      readonly masterName: string;
      /** The sentinels' own AUTH, when they require one (`requirepass` / an ACL user in sentinel.conf). */
      readonly sentinelAuth: RedisAuth;
    })
  | (Common & { readonly mode: 'cluster'; readonly nodes: readonly HostPort[] });

/** A host:port list item (IPv6 in brackets); the port is checked by `hostPortProblem`. */
export const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

export function parseHostPort(text: string): HostPort {
  const m = HOST_PORT.exec(text);
  if (!m?.[1] || !m[2]) throw new Error(`not host:port: ${JSON.stringify(text)}`);
  return { host: m[1].replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) };
}

/** Why a host:port list is refused (a port out of range), or undefined. */
export function hostPortProblem(setting: string, items: readonly string[]): string | undefined {
  const bad = items.find((i) => {
    const port = Number(HOST_PORT.exec(i)?.[2]);
    return !(port >= 1 && port <= 65_535);
  });
  return bad === undefined ? undefined : `${setting}: ${JSON.stringify(bad)} has no port from 1 to 65535`;
}

/** What the settings say about Redis (validated by the settings table's rules first). */
export interface RedisSettingValues {
  readonly mode: RedisMode;
  readonly url: string;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
  readonly tlsServername: string | undefined;
  readonly caFile: string | undefined;
  readonly sentinels: readonly string[];
  readonly sentinelMaster: string | undefined;
  readonly sentinelUsername: string | undefined;
  readonly sentinelPassword: string | undefined;
  readonly clusterNodes: readonly string[];
}

/** The target the (already validated) settings describe. */
export function redisTargetOf(v: RedisSettingValues): RedisTarget {
  if (v.mode === 'standalone') {
    const u = parseRedisUrl(v.url, 'EBB_REDIS_URL');
    const tls = u.tls ? { caFile: v.caFile, servername: v.tlsServername } : undefined;
    const auth = { username: u.username ?? v.username, password: v.password ?? u.password };
    return { mode: 'standalone', host: u.host, port: u.port, db: u.db, auth, tls };
  }
  const auth = { username: v.username, password: v.password };
  const tls = v.tls ? { caFile: v.caFile, servername: v.tlsServername } : undefined;
  if (v.mode === 'sentinel') {
    const sentinelAuth = { username: v.sentinelUsername, password: v.sentinelPassword };
    return { mode: 'sentinel', sentinels: v.sentinels.map(parseHostPort), masterName: v.sentinelMaster ?? '', sentinelAuth, auth, tls };
  }
  return { mode: 'cluster', nodes: v.clusterNodes.map(parseHostPort), auth, tls };
}

function hostPort(h: HostPort): string {
  return h.host.includes(':') ? `[${h.host}]:${h.port}` : `${h.host}:${h.port}`;
}

/** A description without credentials, for logs and error messages. */
/** The setting that names where Redis is, for messages that tell an operator what to fix. */
export function redisLocationSetting(t: RedisTarget): string {
  switch (t.mode) {
    case 'standalone':
      return 'EBB_REDIS_URL';
    case 'sentinel':
      return 'EBB_REDIS_SENTINELS';
    case 'cluster':
      return 'EBB_REDIS_CLUSTER_NODES';
  }
}

export function describeRedis(t: RedisTarget): string {
  const user = t.auth.username === undefined ? '' : `${t.auth.username}@`;
  const tls = t.tls ? ' (tls)' : '';
  switch (t.mode) {
    case 'standalone':
      return `${t.tls ? 'rediss' : 'redis'}://${user}${hostPort(t)}${t.db === 0 ? '' : `/${t.db}`}`;
    case 'sentinel':
      return `sentinel ${t.masterName} via ${t.sentinels.map(hostPort).join(',')}${user ? ` as ${t.auth.username}` : ''}${tls}`;
    case 'cluster':
      return `cluster ${t.nodes.map(hostPort).join(',')}${user ? ` as ${t.auth.username}` : ''}${tls}`;
  }
}
