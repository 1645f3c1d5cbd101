/**
 * The cluster's pre-warm pull budget: at most `limit` pre-warm pulls in progress at once, across every App,
 * ImagePullJob and worker, so that many rollouts at once cannot flood a registry; at most a share of it for one
 * namespace, and a cap on the ImageList entries one namespace holds, so that one tenant can neither take the whole
 * budget nor fill the nodes' ImageLists. One pull is one holder's images on one node, from its request until the
 * daemon reports them Pulled or Failed (what `parallelism` counts too).
 *
 * The count lives in one Redis sorted set next to the queue (same hash tag): a member `<namespace>/<app>/<node>`
 * per pull, scored by when its lease ends. One script per reconcile, atomic across workers: drop expired
 * leases, give back the App's finished pulls, renew its running ones, then grant new pulls in order while there
 * is room. A lease outlives a crashed worker or a lost write by at most LEASE_MS; losing Redis loses the count,
 * which the running pulls' Apps rebuild at their next reconcile (until then more may pull than the budget).
 */
import type { RedisClient } from '../../queue/connection.ts';

export interface PullBudgetRequest {
  /** This holder's pulls still in progress: renewed, counted even beyond the limit (they run already). */
  pulling: readonly string[];
  /** This holder's nodes with no pull in progress any more: their share is given back. */
  done: readonly string[];
  /** Nodes to request now, in order of need: granted while there is room. */
  want: readonly string[];
  /**
   * The nodes whose entries the holder keeps (requested earlier, not asked for again), and how many ImageList
   * entries it holds on each node: counted against its namespace's entries. Absent: none, 0.
   */
  kept?: readonly string[] | undefined;
  entriesPerNode?: number | undefined;
}

/** Which limit left wanted nodes out: the cluster's budget, the namespace's share of it, or its entries. */
export type PullLimit = 'budget' | 'namespacePulls' | 'namespaceEntries';

export interface PullGrant {
  granted: string[];
  /** Set when some of `want` was not granted: the first limit that refused a node. */
  limitedBy?: PullLimit | undefined;
}

/** The per-namespace limits inside the budget (EBB_PREWARM_NAMESPACE_PULLS, EBB_PREWARM_NAMESPACE_ENTRIES). */
export interface NamespaceLimits {
  /** Pulls of one namespace in progress at once. */
  pulls: number;
  /** ImageList entries (images × nodes) one namespace's Apps and ImagePullJobs hold together. */
  entries: number;
}

export interface PullBudget {
  /**
   * Settles holder `holder`'s (`<namespace>/<name>`: an App, or `<namespace>/<IMAGE_PULL_JOB_HOLDER><name>`)
   * share of the budget; answers the nodes of `want` granted.
   */
  settle(holder: string, request: PullBudgetRequest): Promise<PullGrant>;
}

/** No budget: everything wanted is granted (a worker without Redis, tests). */
export const UNLIMITED_BUDGET: PullBudget = { settle: (_holder, request) => Promise.resolve({ granted: [...request.want] }) };

/** An ImagePullJob's holder name starts with this (no App name can: it is no DNS label character). */
export const IMAGE_PULL_JOB_HOLDER = 'ImagePullJob:';

/**
 * A lease outlives the longest pull a daemon waits for by default, and the App reconciles (and renews it) when
 * one of its pulls ends.
 */
export const LEASE_MS = 15 * 60_000;
/**
 * A holder's count of entries outlives the watcher's full resync (every known object every hour by default),
 * at which every holder settles again; a holder that never does (its worker died mid-way) is forgotten then.
 */
export const ENTRIES_LEASE_MS = 3 * 3_600_000;

/** The sorted set holding the pulls in progress. */
export function budgetKey(prefix: string): string {
  return `${prefix}:prewarm-pulls`;
}

/** One namespace's keys: its pulls in progress (sorted set), its holders' entry counts (hash) and their leases (sorted set). */
export function namespaceKeys(prefix: string, namespace: string): [string, string, string] {
  return [`${prefix}:prewarm-pulls:ns:${namespace}`, `${prefix}:prewarm-entries:ns:${namespace}`, `${prefix}:prewarm-entry-leases:ns:${namespace}`];
}

// KEYS: the set, the namespace's set, its entry counts, their leases. ARGV: now, lease end, limit, holder
// prefix, #pulling, #done, #kept, entries per node, namespace pull limit, namespace entry cap, holder, entries
// lease end, then pulling, done, kept, want. Answers the limit that refused a node first ('' when none), then
// the granted nodes.
const SETTLE = `
local key, nskey, ekey, lkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now, lease = ARGV[1], ARGV[2]
redis.call('zremrangebyscore', key, '-inf', now)
redis.call('zremrangebyscore', nskey, '-inf', now)
for _, h in ipairs(redis.call('zrangebyscore', lkey, '-inf', now)) do redis.call('hdel', ekey, h) end
redis.call('zremrangebyscore', lkey, '-inf', now)
local prefix = ARGV[4]
local np, nd, nk = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local per, nslimit, cap, holder = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11]
local i = 13
for _ = 1, np do
  redis.call('zadd', key, lease, prefix .. ARGV[i])
  redis.call('zadd', nskey, lease, prefix .. ARGV[i])
  i = i + 1
end
for _ = 1, nd do
  redis.call('zrem', key, prefix .. ARGV[i])
  redis.call('zrem', nskey, prefix .. ARGV[i])
  i = i + 1
end
local mine = nk * per
i = i + nk
local others = 0
local counts = redis.call('hgetall', ekey)
for j = 1, #counts, 2 do
  if counts[j] ~= holder then others = others + tonumber(counts[j + 1]) end
end
local room = tonumber(ARGV[3]) - redis.call('zcard', key)
local nsroom = nslimit - redis.call('zcard', nskey)
local limited = ''
local granted = {}
while i <= #ARGV do
  local member = prefix .. ARGV[i]
  local grant = false
  if others + mine + per > cap then
    if limited == '' then limited = 'namespaceEntries' end
  elseif redis.call('zscore', key, member) then
    grant = true
  elseif room <= 0 then
    if limited == '' then limited = 'budget' end
  elseif nsroom <= 0 then
    if limited == '' then limited = 'namespacePulls' end
  else
    grant = true
    room = room - 1
    nsroom = nsroom - 1
  end
  if grant then
    redis.call('zadd', key, lease, member)
    redis.call('zadd', nskey, lease, member)
    mine = mine + per
    table.insert(granted, ARGV[i])
  end
  i = i + 1
end
if mine > 0 then
  redis.call('hset', ekey, holder, mine)
  redis.call('zadd', lkey, ARGV[12], holder)
else
  redis.call('hdel', ekey, holder)
  redis.call('zrem', lkey, holder)
end
table.insert(granted, 1, limited)
return granted
`;

const LIMITS = new Set<string>(['budget', 'namespacePulls', 'namespaceEntries']);

/**
 * The budget kept in Redis under `prefix`: at most `limit` pulls at once, at most `ns.pulls` of one namespace,
 * and at most `ns.entries` ImageList entries held by one namespace (a holder's kept entries always count, and
 * are never taken back: only new requests are refused).
 */
export function redisPullBudget(
  client: RedisClient,
  prefix: string,
  limit: number,
  now: () => number = Date.now,
  ns: NamespaceLimits = { pulls: limit, entries: Number.MAX_SAFE_INTEGER },
): PullBudget {
  return {
    async settle(holder, { pulling, done, want, kept = [], entriesPerNode = 0 }) {
      const t = now();
      const namespace = holder.slice(0, Math.max(0, holder.indexOf('/')));
      const keys = [budgetKey(prefix), ...namespaceKeys(prefix, namespace)];
      const head = [
        t,
        t + LEASE_MS,
        limit,
        `${holder}/`,
        pulling.length,
        done.length,
        kept.length,
        entriesPerNode,
        ns.pulls,
        ns.entries,
        holder,
        t + ENTRIES_LEASE_MS,
      ];
      const args = [...head, ...pulling, ...done, ...kept, ...want].map(String);
      const answer: unknown = await client.eval(SETTLE, keys.length, ...keys, ...args);
      const [limited, ...granted] = Array.isArray(answer) ? answer.map(String) : [''];
      return { granted, ...(limited !== undefined && LIMITS.has(limited) ? { limitedBy: limited as PullLimit } : {}) };
    },
  };
}

/** How many pre-warm pulls the budget counts in progress now (expired leases left out). */
export async function pullsInProgress(client: RedisClient, prefix: string, now = Date.now()): Promise<number> {
  return client.zcount(budgetKey(prefix), `(${now}`, '+inf');
}
