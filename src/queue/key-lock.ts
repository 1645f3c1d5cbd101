import { randomBytes } from 'node:crypto';
import type { RedisClient } from './connection.ts';
import { sleep } from '../common/wait.ts';

const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

export interface KeyLockOptions {
  /** The lock expires by itself after this long, so a crashed holder blocks others only briefly. */
  ttlMs?: number;
  /** Give up (throw) after waiting this long; longer than ttlMs so an abandoned lock is always outlived. */
  waitMs?: number;
}

/**
 * Runs `fn` while holding a short Redis lock (SET NX PX with a random token, released only by its owner).
 * Used to make read-compare-write sequences of BullMQ calls on one id atomic with respect to each other.
 */
export async function withKeyLock<T>(client: RedisClient, lockKey: string, fn: () => Promise<T>, opts: KeyLockOptions = {}): Promise<T> {
  const ttlMs = opts.ttlMs ?? 5_000;
  const deadline = Date.now() + (opts.waitMs ?? ttlMs + 1_000);
  const token = randomBytes(8).toString('hex');
  let delay = 5;
  while ((await client.set(lockKey, token, 'PX', ttlMs, 'NX')) !== 'OK') {
    if (Date.now() > deadline) throw new Error(`timed out waiting for lock ${lockKey}`);
    await sleep(delay);
    delay = Math.min(delay * 2, 25);
  }
  try {
    return await fn();
  } finally {
    // If Redis is unreachable now, the lock simply expires.
    await client.eval(RELEASE, 1, lockKey, token).catch(() => undefined);
  }
}
