/**
 * A cluster-wide cap on reconciles of one namespace running at once, next to tenant fairness (which orders
 * what starts, but lets one namespace's jobs fill every free worker once they run). Each running reconcile
 * holds a lease in a sorted set per namespace (member: the job id, score: when the lease lapses); a worker
 * that dies leaves a lease that lapses by itself. A job over the cap is moved back to the delayed set for a
 * short, jittered time (BullMQ's manual delay: no attempt is spent) and tried again.
 */
import type { RedisClient } from './connection.ts';

// KEYS[1] the namespace's set; ARGV: now, lease end, member, cap, key TTL (ms). 1: admitted, 0: at the cap.
const ACQUIRE = `
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1])
if redis.call('zscore', KEYS[1], ARGV[3]) == false and redis.call('zcard', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('zadd', KEYS[1], ARGV[2], ARGV[3])
redis.call('pexpire', KEYS[1], ARGV[5])
return 1`;

export interface NamespaceGate {
  /** True when `member` may run now in `namespace` (and then holds a lease until `release` or it lapses). */
  acquire(namespace: string, member: string, now: number): Promise<boolean>;
  release(namespace: string, member: string): Promise<void>;
  /** How long a job over the cap waits before it is tried again (jittered). */
  retryDelayMs(): number;
}

export interface NamespaceGateOptions {
  cap: number;
  /** A lease lapses this long after it was taken (a reconcile that runs longer stops counting). */
  leaseMs: number;
  /** Delays of jobs over the cap: from `minDelayMs` to twice that. */
  minDelayMs: number;
  random?: () => number;
}

export function namespaceGate(client: RedisClient, prefix: string, opts: NamespaceGateOptions): NamespaceGate {
  const setOf = (ns: string): string => `${prefix}:ns-running:${ns}`;
  const random = opts.random ?? Math.random;
  return {
    acquire: async (ns, member, now) => {
      const admitted = await client.eval(ACQUIRE, 1, setOf(ns), now, now + opts.leaseMs, member, opts.cap, opts.leaseMs * 2);
      return admitted === 1;
    },
    release: async (ns, member) => {
      await client.zrem(setOf(ns), member);
    },
    retryDelayMs: () => Math.round(opts.minDelayMs * (1 + random())),
  };
}
