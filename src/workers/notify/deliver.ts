/** Sends notifications to the webhook: one queue of their own, retried with backoff, never in a reconcile. */
import { Worker, type Job } from 'bullmq';
import { errorSummary } from '../../common/errors.ts';
import type { Logger } from '../../common/log.ts';
import { redisConnection, type RedisClient } from '../../queue/connection.ts';
import { NOTIFY_QUEUE, notifyQueue, type NotifyQueue } from '../../queue/notify-queue.ts';
import type { QueueConfig } from '../../queue/settings.ts';
import type { EventRecorder } from '../app/client.ts';
import type { WebhookHttp } from '../egress/outbound.ts';
import { notificationOf, type Notification } from './notification.ts';

/** How long one delivery may take before it counts as failed (and is retried). */
const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * POSTs one notification under the worker's egress rules (no redirects, its answer capped, refused addresses
 * refused); a non-2xx answer, a refusal or no answer in time throws (BullMQ retries). The URL is never logged.
 */
export async function deliver(url: string, body: Notification['body'], http: WebhookHttp, signal: AbortSignal = new AbortController().signal): Promise<void> {
  const res = await http(url, JSON.stringify(body), DELIVERY_TIMEOUT_MS, signal);
  if (res.status < 200 || res.status > 299) throw new Error(`the notification webhook answered ${res.status}`);
}

/** The worker's side: consumes the notify queue. */
function startNotifier(connection: RedisClient, cfg: QueueConfig, url: string, http: WebhookHttp, log: Logger): Worker<Notification['body'], void, string> {
  const worker = new Worker<Notification['body'], void, string>(
    NOTIFY_QUEUE,
    async (job: Job<Notification['body'], void, string>) => {
      await deliver(url, job.data, http);
      log.info({ notification: job.id, attempt: job.attemptsMade + 1 }, 'notification delivered');
    },
    { connection, prefix: cfg.prefix, concurrency: 2 },
  );
  worker.on('failed', (job, err) => log.warn({ notification: job?.id, attempt: job?.attemptsMade, err: errorSummary(err) }, 'notification not delivered'));
  worker.on('error', (err) => log.debug({ err: errorSummary(err) }, 'notifier error'));
  return worker;
}

/** Sends `n` once: a notification with the same id already queued or kept is not sent again. */
export function enqueueNotification(queue: NotifyQueue): (n: Notification) => Promise<void> {
  return async (n) => {
    await queue.add('notify', n.body, { jobId: n.id });
  };
}

/** An Event recorder that also queues the notification of the Events that make one (a lost one never fails the Event). */
export function notifyingRecorder(inner: EventRecorder, send: (n: Notification) => Promise<void>, log: Logger): EventRecorder {
  return {
    record: async (app, event, now) => {
      const n = notificationOf(app, event, now);
      if (n) await send(n).catch((err: unknown) => log.warn({ err: errorSummary(err), reason: event.reason }, 'could not queue the notification'));
      await inner.record(app, event, now);
    },
  };
}

export interface Notifications {
  readonly send: (n: Notification) => Promise<void>;
  readonly close: () => Promise<void>;
}

/** Queue and delivery of notifications in a worker process, on connections of their own. */
export function startNotifications(cfg: QueueConfig, url: string, http: WebhookHttp, log: Logger): Notifications {
  const producer = redisConnection(cfg.redis, { forWorker: false, name: 'ebb-notify', log });
  const blocking = redisConnection(cfg.redis, { forWorker: true, name: 'ebb-notifier', log });
  const queue = notifyQueue(producer, cfg);
  queue.on('error', (err: Error) => log.debug({ err: err.message }, 'notify queue error'));
  const worker = startNotifier(blocking, cfg, url, http, log);
  return {
    send: enqueueNotification(queue),
    close: async () => {
      await worker.close();
      await queue.close();
      await Promise.all([producer.quit().catch(() => undefined), blocking.quit().catch(() => undefined)]);
    },
  };
}
