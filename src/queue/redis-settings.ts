import { table, type Values } from '../common/settings.ts';
import { HOST_PORT, REDIS_MODES, hostPortProblem, redisTargetOf, redisUrlProblem, type RedisTarget } from './redis-target.ts';

const HOSTS = { type: 'list', item: HOST_PORT, itemFormat: 'host:port' } as const;
const SENTINEL_ONLY = ['sentinels', 'sentinelMaster', 'sentinelUsername', 'sentinelPassword'] as const;

const ENTRIES = {
  redisMode: {
    name: 'EBB_REDIS_MODE',
    type: 'enum',
    values: REDIS_MODES,
    default: 'standalone',
    doc: '`standalone`: one server at `EBB_REDIS_URL`; `sentinel`: the primary the sentinels of `EBB_REDIS_SENTINELS` monitor as `EBB_REDIS_SENTINEL_MASTER` (followed through failovers); `cluster`: a Redis Cluster reached through the seed nodes of `EBB_REDIS_CLUSTER_NODES`',
  },
  redisUrl: {
    name: 'EBB_REDIS_URL',
    type: 'url',
    default: 'redis://127.0.0.1:6379',
    secret: true,
    schemes: ['redis:', 'rediss:'],
    format: 'redis://[user:password@]host[:port][/db]',
    check: redisUrlProblem,
    doc: 'standalone mode: `redis://` or `rediss://` (TLS), optional user and password, optional `/db`',
  },
  redisUsername: {
    name: 'EBB_REDIS_USERNAME',
    type: 'string',
    doc: 'the ACL user ebb authenticates as (in standalone mode it may be in `EBB_REDIS_URL` instead); unset: the `default` user',
  },
  redisPassword: {
    name: 'EBB_REDIS_PASSWORD',
    type: 'string',
    secret: true,
    doc: 'password of the Redis user, in every mode (set it from a Secret with `secretKeyRef`); replaces a password in `EBB_REDIS_URL`',
  },
  redisTls: {
    name: 'EBB_REDIS_TLS',
    type: 'switch',
    default: false,
    doc: 'sentinel and cluster modes: TLS towards every node and sentinel (standalone mode: use a `rediss://` URL)',
  },
  redisTlsServername: {
    name: 'EBB_REDIS_TLS_SERVERNAME',
    type: 'string',
    pattern: /^[A-Za-z0-9.*-]+$/,
    format: 'be a DNS name',
    defaultDoc: 'the host connected to',
    doc: "the name the Redis servers' certificates must carry (SNI and verification), when it is not the host connected to (an IP, a node announced by Sentinel or Cluster)",
  },
  redisCaFile: {
    name: 'EBB_REDIS_CA_FILE',
    type: 'string',
    pattern: /^\//,
    format: 'be an absolute path',
    doc: "PEM file of the CA that signed the Redis servers' certificates, with TLS; unset: the system's CAs",
  },
  sentinels: {
    name: 'EBB_REDIS_SENTINELS',
    ...HOSTS,
    doc: 'sentinel mode: the sentinels, `host:port,host:port,…` (any that answers will do; the others are learnt from it)',
  },
  sentinelMaster: {
    name: 'EBB_REDIS_SENTINEL_MASTER',
    type: 'string',
    pattern: /^[^\s]+$/,
    format: 'be a name without spaces',
    doc: 'sentinel mode: the name the sentinels monitor the primary under (`sentinel monitor <name> …`)',
  },
  sentinelUsername: {
    name: 'EBB_REDIS_SENTINEL_USERNAME',
    type: 'string',
    doc: 'sentinel mode: the ACL user of the sentinels themselves, when they require one',
  },
  sentinelPassword: {
    name: 'EBB_REDIS_SENTINEL_PASSWORD',
    type: 'string',
    secret: true,
    doc: "sentinel mode: the sentinels' own password (`requirepass` in sentinel.conf), when they require one; the data nodes use `EBB_REDIS_PASSWORD`",
  },
  redisCommandTimeout: {
    name: 'EBB_REDIS_COMMAND_TIMEOUT',
    type: 'duration',
    default: '10s',
    min: '100ms',
    max: '10m',
    doc: "deadline of each Redis command other than BullMQ's blocking reads (which wait on the server's own timeout); every connection also sends TCP keepalives after 30s of silence",
  },
  clusterNodes: {
    name: 'EBB_REDIS_CLUSTER_NODES',
    ...HOSTS,
    doc: 'cluster mode: seed nodes, `host:port,host:port,…` (the rest of the Cluster is learnt from them); every key of ebb shares the `{hash tag}` of `EBB_QUEUE_PREFIX`, so one slot',
  },
} as const;

/** What /healthz of a process that uses Redis (the watcher, the worker) says about it. */
export const REDIS_LIVENESS_SETTINGS = table({
  redisUnhealthyAfter: {
    name: 'EBB_REDIS_UNHEALTHY_AFTER',
    type: 'duration',
    default: '5m',
    min: '1s',
    max: '24h',
    zeroDisables: true,
    doc: '`/healthz` fails once Redis has been out of reach this long, or has not answered a PING (sent every 5s) this long, so the kubelet restarts the process',
  },
});

/** How ebb reaches Redis, in every mode; part of QUEUE_SETTINGS. */
export const REDIS_SETTINGS = table(ENTRIES, [
  {
    uses: ['redisMode', 'redisUrl', 'redisUsername', 'redisTls', 'redisTlsServername', 'redisCaFile', ...SENTINEL_ONLY, 'clusterNodes'],
    problems: (v, isSet) => modeProblems(v, isSet),
  },
]);

type RedisValues = Values<typeof ENTRIES>;
type Key = keyof typeof ENTRIES;
type IsSet = (key: Key) => boolean;

const name = (k: Key): string => ENTRIES[k].name;
const TLS_DETAILS = ['redisCaFile', 'redisTlsServername'] as const;

/** The combinations that make no sense, each worded with the variables involved. */
function modeProblems(v: RedisValues, isSet: IsSet): string[] {
  const mode = v.redisMode;
  const foreign: Key[] = mode === 'standalone' ? [...SENTINEL_ONLY, 'clusterNodes'] : mode === 'sentinel' ? ['clusterNodes'] : [...SENTINEL_ONLY];
  const problems = foreign
    .filter(isSet)
    .map((k) => `${name(k)} is set but EBB_REDIS_MODE is ${mode}: it applies to ${k === 'clusterNodes' ? 'cluster' : 'sentinel'} mode only`);
  return [...problems, ...(mode === 'standalone' ? standaloneProblems(v, isSet) : discoveryProblems(v, isSet))];
}

/** Standalone mode: TLS and the user may come from EBB_REDIS_URL. */
function standaloneProblems(v: RedisValues, isSet: IsSet): string[] {
  const problems: string[] = [];
  if (isSet('redisTls')) problems.push('EBB_REDIS_TLS is set but EBB_REDIS_MODE is standalone: a rediss:// EBB_REDIS_URL turns TLS on in standalone mode');
  if (isSet('redisUsername') && new URL(v.redisUrl).username !== '') {
    problems.push('EBB_REDIS_USERNAME is set and EBB_REDIS_URL names a user too: name it in one place');
  }
  const tls = v.redisUrl.startsWith('rediss:');
  for (const k of TLS_DETAILS.filter(isSet)) if (!tls) problems.push(`${name(k)} is set but EBB_REDIS_URL is not a rediss:// (TLS) URL`);
  return problems;
}

/** Sentinel and cluster modes: the nodes come from their own lists, TLS from EBB_REDIS_TLS. */
function discoveryProblems(v: RedisValues, isSet: IsSet): string[] {
  const sentinel = v.redisMode === 'sentinel';
  const problems: string[] = [];
  if (isSet('redisUrl')) {
    const instead = sentinel ? 'set EBB_REDIS_SENTINELS and EBB_REDIS_SENTINEL_MASTER' : 'set EBB_REDIS_CLUSTER_NODES';
    problems.push(`EBB_REDIS_URL is set but EBB_REDIS_MODE is ${v.redisMode}: it applies to standalone mode only (${instead})`);
  }
  for (const k of TLS_DETAILS.filter(isSet)) if (!v.redisTls) problems.push(`${name(k)} is set but EBB_REDIS_TLS is not true`);
  const missing: Key[] = sentinel
    ? [...(v.sentinels.length === 0 ? (['sentinels'] as const) : []), ...(v.sentinelMaster === undefined ? (['sentinelMaster'] as const) : [])]
    : v.clusterNodes.length === 0
      ? ['clusterNodes']
      : [];
  for (const k of missing) problems.push(`EBB_REDIS_MODE is ${v.redisMode} but ${name(k)} is not set`);
  const bad = sentinel ? hostPortProblem('EBB_REDIS_SENTINELS', v.sentinels) : hostPortProblem('EBB_REDIS_CLUSTER_NODES', v.clusterNodes);
  return bad ? [...problems, bad] : problems;
}

/** The Redis target of the parsed (and checked) settings. */
export function redisTargetOfSettings(v: RedisValues): RedisTarget {
  return redisTargetOf({
    mode: v.redisMode,
    url: v.redisUrl,
    username: v.redisUsername,
    password: v.redisPassword,
    tls: v.redisTls,
    tlsServername: v.redisTlsServername,
    caFile: v.redisCaFile,
    sentinels: v.sentinels,
    sentinelMaster: v.sentinelMaster,
    sentinelUsername: v.sentinelUsername,
    sentinelPassword: v.sentinelPassword,
    clusterNodes: v.clusterNodes,
  });
}
