import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EventReason } from '../../../src/api/keys.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { notifyQueue } from '../../../src/queue/notify-queue.ts';
import { notifyingRecorder, startNotifications } from '../../../src/workers/notify/deliver.ts';
import { notificationOf, type Notification } from '../../../src/workers/notify/notification.ts';
import { webhookHttp } from '../../../src/workers/egress/outbound.ts';
import { makeApp } from '../app/fixtures.ts';
import { useRedis } from './support.ts';

const log = createLogger('test', 'silent');
const app = { ...makeApp('web'), status: { updateRevision: 'web-2' } };
const aborted = { type: 'Warning' as const, reason: EventReason.rolloutAborted, action: 'Abort', message: 'ebb rollout abort: pods go back to web-1' };

/** A webhook that answers `failures` requests with 503, then 200, keeping every body it got. */
async function webhook(failures: number): Promise<{ server: Server; url: string; bodies: unknown[]; calls: () => number }> {
  const bodies: unknown[] = [];
  let calls = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      calls++;
      if (calls <= failures) return void res.writeHead(503).end();
      bodies.push(JSON.parse(text));
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies, calls: () => calls };
}

describe('notificationOf', () => {
  it('makes a Slack-compatible notification of the transitions that are sent, and none of others', () => {
    const n = notificationOf(app, aborted, new Date('2026-01-01T00:00:00Z'));
    expect(n?.body.text).toBe(':warning: App ns/web: rollout aborted. ebb rollout abort: pods go back to web-1');
    expect(n?.body.ebb).toMatchObject({ namespace: 'ns', app: 'web', reason: 'RolloutAborted', updateRevision: 'web-2', at: '2026-01-01T00:00:00.000Z' });
    expect(n?.id).toMatch(/^notify\.[A-Za-z0-9._-]+\.RolloutAborted\.web-2\.0$/);
    expect(notificationOf(app, { ...aborted, reason: EventReason.successfulCreate }, new Date())).toBeUndefined();
  });

  it('never fails the Event when the notification cannot be queued', async () => {
    const recorded: string[] = [];
    const rec = notifyingRecorder({ record: (_a, e) => Promise.resolve(void recorded.push(e.reason)) }, () => Promise.reject(new Error('redis away')), log);
    await rec.record(app, aborted, new Date());
    expect(recorded).toEqual(['RolloutAborted']);
  });
});

describe('notification delivery on a real Redis', () => {
  const redis = useRedis();
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });

  it('retries a receiver that is down, delivers once, and sends a transition once however often it is recorded', async () => {
    const hook = await webhook(2);
    closers.push(() => new Promise((r) => hook.server.close(r)));
    const cfg = redis.config();
    const notifications = startNotifications(cfg, { cluster: { url: hook.url, post: webhookHttp('local') } }, log);
    if (!notifications) throw new Error('no notifications with a webhook');
    closers.push(() => notifications.close());
    const n = notificationOf(app, aborted, new Date()) as Notification;
    await notifications.send(n);
    await notifications.send(n);
    await waitFor(() => Promise.resolve(hook.bodies.length > 0 ? true : undefined), { timeoutMs: 30_000, what: 'the webhook to receive the notification' });
    expect(hook.calls(), 'two refusals, then the delivery').toBe(3);
    expect(hook.bodies).toEqual([n.body]);
    // Recorded again after delivery: the kept job has that id, so nothing new is queued.
    await notifications.send(n);
    const queue = notifyQueue(redis.connection(false), cfg);
    closers.push(() => queue.close());
    const counts = await waitFor(
      async () => {
        const c = await queue.getJobCounts('wait', 'delayed', 'active', 'completed', 'failed');
        return c['active'] === 0 ? c : undefined;
      },
      { timeoutMs: 10_000, what: 'the delivery job to finish' },
    );
    expect(counts).toEqual({ wait: 0, delayed: 0, active: 0, completed: 1, failed: 0 });
  }, 60_000);
});
