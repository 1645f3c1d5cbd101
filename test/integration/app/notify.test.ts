/**
 * Rollout notifications on the sandbox: with EBB_NOTIFY_WEBHOOK_URL set, a completed rollout reaches a local
 * webhook once, as Slack-compatible JSON naming the App and its revision.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import type { Notification } from '../../../src/workers/notify/notification.ts';
import { createApp, patchApp, settled, template, uniqueName, useController } from './harness.ts';

const received: Notification['body'][] = [];
const server = createServer((req, res) => {
  let text = '';
  req.on('data', (c: Buffer) => (text += c.toString()));
  req.on('end', () => {
    received.push(JSON.parse(text) as Notification['body']);
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const ctl = useController('app-notify', { env: { EBB_NOTIFY_WEBHOOK_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` } });

describe('rollout notifications', () => {
  it('tell the webhook when a rollout completes', async () => {
    const name = uniqueName('nt');
    await createApp(ctl.ns, name, { replicas: 2, template: template(name, 'v1') });
    await settled(ctl.ns, name);
    expect(
      received.filter((b) => b.ebb.app === name),
      'creating an App is no rollout',
    ).toEqual([]);
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    const s = await settled(ctl.ns, name);
    const got = await waitFor(() => Promise.resolve(received.find((b) => b.ebb.app === name && b.ebb.reason === 'RolloutComplete')), {
      timeoutMs: 90_000,
      what: 'the RolloutComplete notification',
    });
    expect(got.text).toContain(`App ${ctl.ns}/${name}: rollout complete.`);
    expect(got.ebb).toMatchObject({ namespace: ctl.ns, updateRevision: s.app.status?.updateRevision, type: 'Normal' });
    expect(received.filter((b) => b.ebb.app === name)).toHaveLength(1);
  });
});
