/** The `notify` queue: rollout notifications waiting for delivery to their webhooks (the worker sends them; Bull Board shows them). */
import { Queue } from 'bullmq';
import type { RedisClient } from './connection.ts';
import type { QueueConfig } from './settings.ts';

/** What a notification job carries: its destination and the JSON body POSTed there (see workers/notify/destinations.ts). */
export type NotificationBody = object;

export const NOTIFY_QUEUE = 'notify';

export type NotifyQueue = Queue<NotificationBody, void, string>;

/** A failed delivery is tried again after 2 s, 4 s, … for about an hour (12 attempts); then it is kept as failed. */
export function notifyQueue(connection: RedisClient, cfg: QueueConfig): NotifyQueue {
  return new Queue(NOTIFY_QUEUE, {
    connection,
    prefix: cfg.prefix,
    defaultJobOptions: {
      attempts: 12,
      backoff: { type: 'exponential', delay: 2_000, jitter: 0.3 },
      // Kept an hour (at most 10,000): a job id seen again in that time is the same notification, not sent twice.
      removeOnComplete: { age: 3_600, count: 10_000 },
      removeOnFail: { count: 100 },
    },
  });
}
