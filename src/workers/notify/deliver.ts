/** Sends notifications to their webhooks: one queue of their own, retried with backoff, never in a reconcile. */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { errorSummary } from '../../common/errors.ts';
import type { Logger } from '../../common/log.ts';
import { redisConnection, type RedisClient } from '../../queue/connection.ts';
import { NOTIFY_QUEUE, notifyQueue, type NotifyQueue } from '../../queue/notify-queue.ts';
import type { QueueConfig } from '../../queue/settings.ts';
import type { EventRecorder } from '../app/model/client.ts';
import { isEgressError } from '../egress/errors.ts';
import { destinationsOf, isWebhookUrl, jobOf, jobsOf, type Destination, type NotifyJob, type NotifyTargets } from './destinations.ts';
import { notificationOf, type Notification } from './notification.ts';

/** How long one delivery may take before it counts as failed (and is retried). */
const DELIVERY_TIMEOUT_MS = 10_000;

/** Refusals no retry mends (a URL that is none, a host the namespace may not call, a redirect): kept as failed at once. */
const PERMANENT = ['BadUrl', 'HostNotAllowed', 'AddressRefused', 'Redirect'] as const;

/**
 * POSTs one job's notification to its destination under the egress rules (no redirects, the answer capped,
 * refused addresses refused); a non-2xx answer or no answer in time throws (BullMQ retries). 'none': the
 * destination names no webhook (a namespace without its Secret), nothing sent. The URL is never logged.
 */
export async function deliverJob(job: NotifyJob, targets: NotifyTargets, signal: AbortSignal): Promise<'sent' | 'none'> {
  const body = JSON.stringify(job.body);
  let status: number;
  try {
    if (job.to === 'cluster') {
      if (!targets.cluster) return 'none';
      status = (await targets.cluster.post(targets.cluster.url, body, DELIVERY_TIMEOUT_MS, signal)).status;
    } else {
      const ns = job.body.ebb.namespace;
      const url = await targets.namespace?.url(ns, signal);
      if (url === undefined || !targets.namespace) return 'none';
      if (!isWebhookUrl(url)) throw new UnrecoverableError(`the webhook of namespace ${ns} (Secret ebb-notify, key url) is not an http:// or https:// URL`);
      status = (await targets.namespace.post(ns, url, body, DELIVERY_TIMEOUT_MS, signal)).status;
    }
  } catch (err) {
    if (isEgressError(err, ...PERMANENT)) throw new UnrecoverableError(err.message);
    throw err;
  }
  if (status < 200 || status > 299) throw new Error(`the notification webhook answered ${status}`);
  return 'sent';
}

/** The worker's side: consumes the notify queue. */
function startNotifier(connection: RedisClient, cfg: QueueConfig, targets: NotifyTargets, log: Logger): Worker<NotifyJob, void, string> {
  const worker = new Worker<NotifyJob, void, string>(
    NOTIFY_QUEUE,
    async (job: Job<NotifyJob, void, string>, _token, signal) => {
      const data = jobOf(job.data);
      const outcome = await deliverJob(data, targets, signal ?? new AbortController().signal);
      if (outcome === 'sent') log.info({ notification: job.id, to: data.to, attempt: job.attemptsMade + 1 }, 'notification delivered');
      else log.debug({ notification: job.id, to: data.to }, 'no webhook for this notification');
    },
    { connection, prefix: cfg.prefix, concurrency: 2 },
  );
  worker.on('failed', (job, err) => log.warn({ notification: job?.id, attempt: job?.attemptsMade, err: errorSummary(err) }, 'notification not delivered'));
  worker.on('error', (err) => log.debug({ err: errorSummary(err) }, 'notifier error'));
  return worker;
}

/** Sends `n` once to each destination: a job with the same id already queued or kept is not added again. */
export function enqueueNotification(queue: NotifyQueue, to: readonly Destination[]): (n: Notification) => Promise<void> {
  return async (n) => {
    for (const job of jobsOf(n, to)) await queue.add('notify', job.data, { jobId: job.id });
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

/** Queue and delivery of notifications in a worker process, on connections of their own; undefined without a destination. */
export function startNotifications(cfg: QueueConfig, targets: NotifyTargets, log: Logger): Notifications | undefined {
  const to = destinationsOf(targets);
  if (to.length === 0) return undefined;
  const producer = redisConnection(cfg.redis, { forWorker: false, name: 'ebb-notify', log });
  const blocking = redisConnection(cfg.redis, { forWorker: true, name: 'ebb-notifier', log });
  const queue = notifyQueue(producer, cfg);
  queue.on('error', (err: Error) => log.debug({ err: err.message }, 'notify queue error'));
  const worker = startNotifier(blocking, cfg, targets, log);
  return {
    send: enqueueNotification(queue, to),
    close: async () => {
      await worker.close();
      await queue.close();
      await Promise.all([producer.quit().catch(() => undefined), blocking.quit().catch(() => undefined)]);
    },
  };
}
