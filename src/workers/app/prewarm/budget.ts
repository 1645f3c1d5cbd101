/**
 * The cluster's pre-warm pull budget: at most `limit` pre-warm pulls in progress at once, across every App and
 * every worker, so that many rollouts at once cannot flood a registry. One pull is one App's images on one node,
 * from its request until the daemon reports them Pulled or Failed (what `parallelism` counts too).
 *
 * The count lives in one Redis sorted set next to the queue (same hash tag): a member `<namespace>/<app>/<node>`
 * per pull, scored by when its lease ends. One script per reconcile, atomic across workers: drop expired
 * leases, give back the App's finished pulls, renew its running ones, then grant new pulls in order while there
 * is room. A lease outlives a crashed worker or a lost write by at most LEASE_MS; losing Redis loses the count,
 * which the running pulls' Apps rebuild at their next reconcile (until then more may pull than the budget).
 */
import type { RedisClient } from '../../../queue/connection.ts';

export interface PullBudgetRequest {
  /** This App's pulls still in progress: renewed, counted even beyond the limit (they run already). */
  pulling: readonly string[];
  /** This App's nodes with no pull in progress any more: their share is given back. */
  done: readonly string[];
  /** Nodes to request now, in order of need: granted while there is room. */
  want: readonly string[];
}

export interface PullBudget {
  /** Settles App `holder`'s (`<namespace>/<name>`) share of the budget; answers the nodes of `want` granted. */
  settle(holder: string, request: PullBudgetRequest): Promise<string[]>;
}

/** No budget: everything wanted is granted (a worker without Redis, tests). */
export const UNLIMITED_BUDGET: PullBudget = { settle: (_holder, request) => Promise.resolve([...request.want]) };

/**
 * A lease outlives the longest pull a daemon waits for by default, and the App reconciles (and renews it) when
 * one of its pulls ends.
 */
export const LEASE_MS = 15 * 60_000;

/** The sorted set holding the pulls in progress. */
export function budgetKey(prefix: string): string {
  return `${prefix}:prewarm-pulls`;
}

// KEYS[1] the set; ARGV: now, lease end, limit, holder prefix, #pulling, #done, then pulling, done, want.
const SETTLE = `
local key = KEYS[1]
redis.call('zremrangebyscore', key, '-inf', ARGV[1])
local holder = ARGV[4]
local np = tonumber(ARGV[5])
local nd = tonumber(ARGV[6])
local i = 7
for _ = 1, np do redis.call('zadd', key, ARGV[2], holder .. ARGV[i]); i = i + 1 end
for _ = 1, nd do redis.call('zrem', key, holder .. ARGV[i]); i = i + 1 end
local room = tonumber(ARGV[3]) - redis.call('zcard', key)
local granted = {}
while i <= #ARGV do
  local member = holder .. ARGV[i]
  if redis.call('zscore', key, member) then
    redis.call('zadd', key, ARGV[2], member)
    table.insert(granted, ARGV[i])
  elseif room > 0 then
    redis.call('zadd', key, ARGV[2], member)
    room = room - 1
    table.insert(granted, ARGV[i])
  end
  i = i + 1
end
return granted
`;

/** The budget kept in Redis under `prefix`, at most `limit` pulls at once. */
export function redisPullBudget(client: RedisClient, prefix: string, limit: number, now: () => number = Date.now): PullBudget {
  const key = budgetKey(prefix);
  return {
    async settle(holder, { pulling, done, want }) {
      const t = now();
      const args = [t, t + LEASE_MS, limit, `${holder}/`, pulling.length, done.length, ...pulling, ...done, ...want].map(String);
      const granted: unknown = await client.eval(SETTLE, 1, key, ...args);
      return Array.isArray(granted) ? granted.map(String) : [];
    },
  };
}

/** How many pre-warm pulls the budget counts in progress now (expired leases left out). */
export async function pullsInProgress(client: RedisClient, prefix: string, now = Date.now()): Promise<number> {
  return client.zcount(budgetKey(prefix), `(${now}`, '+inf');
}
