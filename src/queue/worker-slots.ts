/**
 * The live workers' reconcile slots, for a namespace cap given as a share (`namespace-gate.ts`): each worker
 * process keeps a member `<id>|<slots>` in one sorted set, scored with when it lapses, and renews it on a
 * heartbeat. A worker that dies stops renewing and its slots lapse; one that stops removes them at once.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../common/log.ts';
import { errorSummary } from '../common/errors.ts';
import type { RedisClient } from './connection.ts';

export const workerSlotsKey = (prefix: string): string => `${prefix}:worker-slots`;

export interface WorkerSlotsOptions {
  /** This worker's reconcile slots (all its shards together). */
  slots: number;
  /** How often the registration is renewed; it lapses after three times this. */
  everyMs: number;
  log: Logger;
  id?: string;
}

export interface WorkerSlots {
  /** Registers now (awaited once at start, so the first capped job already sees this worker). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function workerSlots(client: RedisClient, prefix: string, opts: WorkerSlotsOptions): WorkerSlots {
  const member = `${opts.id ?? randomUUID()}|${opts.slots}`;
  const key = workerSlotsKey(prefix);
  let timer: NodeJS.Timeout | undefined;
  const renew = async (): Promise<void> => {
    try {
      await client.zadd(key, Date.now() + 3 * opts.everyMs, member);
    } catch (err) {
      opts.log.debug({ err: errorSummary(err) }, 'could not renew the worker slots registration');
    }
  };
  return {
    start: async () => {
      await renew();
      timer = setInterval(() => void renew(), opts.everyMs);
      timer.unref();
    },
    stop: async () => {
      clearInterval(timer);
      await client.zrem(key, member).catch(() => undefined);
    },
  };
}
