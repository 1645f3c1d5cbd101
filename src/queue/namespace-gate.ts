/**
 * A cluster-wide cap on reconciles of one namespace running at once, next to tenant fairness (which orders
 * what starts, but lets one namespace's jobs fill every free worker once they run). Each running reconcile
 * holds a lease in a sorted set per namespace (member: the job id, score: when the lease lapses); a worker
 * that dies leaves a lease that lapses by itself. A job over the cap is moved back to the delayed set for a
 * short, jittered time (BullMQ's manual delay: no attempt is spent) and tried again.
 *
 * The cap is a count, or a share of the slots of the workers running now (`worker-slots.ts`): with a share,
 * one namespace may hold that part of every worker's slots together, so the rest stay free for the others
 * however many workers KEDA runs.
 */
import type { RedisClient } from './connection.ts';
import { workerSlotsKey } from './worker-slots.ts';

/** `count`: at most this many at once (0: no cap). `share`: at most this percentage of the live workers' slots. */
export type NamespaceCap = { readonly kind: 'count'; readonly count: number } | { readonly kind: 'share'; readonly percent: number };

// KEYS[1] the namespace's set, KEYS[2] the live workers' slots (`worker-slots.ts`); ARGV: now, lease end, member,
// fixed cap (0: a share), share in percent, key TTL (ms). 1: admitted, 0: at the cap. With a share and no live
// worker registered (the registry lost with Redis, before the next heartbeat) it admits.
const ACQUIRE = `
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1])
local cap = tonumber(ARGV[4])
if cap == 0 then
  redis.call('zremrangebyscore', KEYS[2], '-inf', ARGV[1])
  local slots = 0
  for _, m in ipairs(redis.call('zrange', KEYS[2], 0, -1)) do
    slots = slots + (tonumber(string.match(m, '|(%d+)$')) or 0)
  end
  if slots == 0 then cap = -1 else cap = math.max(1, math.floor(slots * tonumber(ARGV[5]) / 100)) end
end
if cap > 0 and redis.call('zscore', KEYS[1], ARGV[3]) == false and redis.call('zcard', KEYS[1]) >= cap then return 0 end
redis.call('zadd', KEYS[1], ARGV[2], ARGV[3])
redis.call('pexpire', KEYS[1], ARGV[6])
return 1`;

export interface NamespaceGate {
  /** True when `member` may run now in `namespace` (and then holds a lease until `release` or it lapses). */
  acquire(namespace: string, member: string, now: number): Promise<boolean>;
  release(namespace: string, member: string): Promise<void>;
  /** How long a job over the cap waits before it is tried again (jittered). */
  retryDelayMs(): number;
}

export interface NamespaceGateOptions {
  cap: NamespaceCap;
  /** A lease lapses this long after it was taken (a reconcile that runs longer stops counting). */
  leaseMs: number;
  /** Delays of jobs over the cap: from `minDelayMs` to twice that. */
  minDelayMs: number;
  random?: () => number;
}

/** The gate, or undefined when the cap is off (a count of 0). */
export function namespaceGate(client: RedisClient, prefix: string, opts: NamespaceGateOptions): NamespaceGate | undefined {
  if (opts.cap.kind === 'count' && opts.cap.count <= 0) return undefined;
  const setOf = (ns: string): string => `${prefix}:ns-running:${ns}`;
  const random = opts.random ?? Math.random;
  const [fixed, percent] = opts.cap.kind === 'count' ? [opts.cap.count, 0] : [0, opts.cap.percent];
  return {
    acquire: async (ns, member, now) => {
      const admitted = await client.eval(ACQUIRE, 2, setOf(ns), workerSlotsKey(prefix), now, now + opts.leaseMs, member, fixed, percent, opts.leaseMs * 2);
      return admitted === 1;
    },
    release: async (ns, member) => {
      await client.zrem(setOf(ns), member);
    },
    retryDelayMs: () => Math.round(opts.minDelayMs * (1 + random())),
  };
}

/** `EBB_NAMESPACE_CONCURRENCY`'s text (`0`, a count, or `N%`) as a cap. */
export function parseNamespaceCap(text: string): NamespaceCap {
  const share = /^(\d+)%$/.exec(text);
  return share ? { kind: 'share', percent: Number(share[1]) } : { kind: 'count', count: Number(text) };
}
