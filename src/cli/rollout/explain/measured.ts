/**
 * The finished measurements explain's plan reads (read only: nothing is measured, nothing asked for), from the
 * Redis the worker keeps them in, with the settings `ebb queue` uses (EBB_REDIS_URL, EBB_QUEUE_PREFIX, ...).
 * Connected only when a plan has a measurement due, within the same deadline as the queues (`--queue-timeout`): when Redis cannot be read, every
 * due measurement counts as not finished (the plan waits for it) and a note says so.
 */
import type { Measurement } from '../../../api/analysis.ts';
import { errorMessage } from '../../../common/errors.ts';
import { redisConnection, type RedisClient } from '../../../queue/connection.ts';
import { redisResultStore } from '../../../workers/measure/store.ts';
import { within } from './deadline.ts';

export interface MeasuredReader {
  /** The results of measure jobs `ids`, in order (undefined: not finished, or not readable). */
  read(ids: readonly string[]): Promise<(Measurement | undefined)[]>;
  /** Why results could not be read, once a read failed. */
  note(): string | undefined;
  close(): void;
}

export function measuredReader(deadlineMs: number): MeasuredReader {
  let client: RedisClient | undefined;
  let failed: string | undefined;
  return {
    read: async (ids) => {
      if (ids.length === 0) return [];
      try {
        const cfg = (await import('../../queue/config.ts')).loadQueueCliConfig();
        client ??= redisConnection(cfg.redis, { forWorker: false, name: 'ebb-rollout-explain-measured' });
        return await within(redisResultStore(client, cfg.prefix).read(ids), deadlineMs);
      } catch (err) {
        failed = `finished measurements not read (${errorMessage(err)}): the plan counts every due measurement as still running`;
        return ids.map(() => undefined);
      }
    },
    note: () => failed,
    close: () => client?.disconnect(),
  };
}
