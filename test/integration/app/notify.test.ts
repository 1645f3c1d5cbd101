/**
 * Rollout notifications on the sandbox: with EBB_NOTIFY_WEBHOOK_URL set, a completed rollout reaches a local
 * webhook once, as Slack-compatible JSON naming the App and its revision; two pause steps of one revision make
 * two messages; and a namespace whose Secret ebb-notify names a webhook gets its own namespace's messages
 * there, never another's.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import type { Notification } from '../../../src/workers/notify/notification.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { createApp, getApp, patchApp, settled, template, uniqueName, until, useController } from './harness.ts';

/** A webhook receiver on loopback keeping, per path, every body it got. */
const received = new Map<string, Notification['body'][]>();
const server = createServer((req, res) => {
  let text = '';
  req.on('data', (c: Buffer) => (text += c.toString()));
  req.on('end', () => {
    const list = received.get(req.url ?? '') ?? [];
    list.push(JSON.parse(text) as Notification['body']);
    received.set(req.url ?? '', list);
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
afterAll(() => new Promise<void>((r) => server.close(() => r())));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const at = (path: string): Notification['body'][] => received.get(path) ?? [];

// Two namespaces, one controller: the namespaces are made first, then named to the controller.
const ns = { a: '', b: '' };
const env: Record<string, string> = { EBB_NOTIFY_WEBHOOK_URL: `${base}/cluster` };
beforeAll(async () => {
  ns.a = await freshNamespace('notify-a');
  ns.b = await freshNamespace('notify-b');
  env['EBB_NAMESPACES'] = `${ns.a},${ns.b}`;
});
useController('app-notify', { env });

const waitUntil = <T>(what: string, f: () => T | undefined): Promise<T> => waitFor(() => Promise.resolve(f()), { timeoutMs: 120_000, what });

describe('rollout notifications', () => {
  it('tell the webhook when a rollout completes', async () => {
    const name = uniqueName('nt');
    await createApp(ns.a, name, { replicas: 2, template: template(name, 'v1') });
    await settled(ns.a, name);
    expect(
      at('/cluster').filter((b) => b.ebb.app === name),
      'creating an App is no rollout',
    ).toEqual([]);
    await patchApp(ns.a, name, { template: template(name, 'v2') });
    const s = await settled(ns.a, name);
    const got = await waitUntil('the RolloutComplete notification', () => at('/cluster').find((b) => b.ebb.app === name && b.ebb.reason === 'RolloutComplete'));
    expect(got.text).toContain(`App ${ns.a}/${name}: rollout complete.`);
    expect(got.ebb).toMatchObject({ namespace: ns.a, updateRevision: s.app.status?.updateRevision, type: 'Normal' });
    expect(at('/cluster').filter((b) => b.ebb.app === name)).toHaveLength(1);
  });

  it('send each of two pause steps of one revision', async () => {
    const name = uniqueName('two');
    const steps = [{ replicas: 1 }, { pause: {} }, { replicas: 2 }, { pause: {} }];
    await createApp(ns.a, name, { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps } } } });
    await settled(ns.a, name);
    await patchApp(ns.a, name, { template: template(name, 'v2') });
    const paused = (n: number) => () => {
      const list = at('/cluster').filter((b) => b.ebb.app === name && b.ebb.reason === 'CanaryPaused');
      return list.length >= n ? list : undefined;
    };
    // Resumed once the step's pause is in the spec and its step in the status (the notification may come first).
    const resumeAt = async (step: number): Promise<void> => {
      await until(ns.a, name, (s) => s.app.spec.updateStrategy?.rollingUpdate?.paused === true && s.app.status?.canary?.step === step, {
        what: `the pause of step ${step + 1}`,
      });
      await patchApp(ns.a, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    };
    const first = await waitUntil('the first pause notification', paused(1));
    expect(first[0]?.ebb.message).toMatch(/^canary step 2: /);
    await resumeAt(1);
    const both = await waitUntil('the second pause notification', paused(2));
    expect(both[1]?.ebb.message).toMatch(/^canary step 4: /);
    expect(both.map((b) => b.ebb.updateRevision)).toEqual([first[0]?.ebb.updateRevision, first[0]?.ebb.updateRevision]);
    await resumeAt(3);
    await waitUntil('the completion', () => at('/cluster').find((b) => b.ebb.app === name && b.ebb.reason === 'RolloutComplete'));
    expect((await getApp(ns.a, name)).status?.canary?.step).toBe(4);
    expect(at('/cluster').filter((b) => b.ebb.app === name && b.ebb.reason === 'CanaryPaused')).toHaveLength(2);
  });

  it("send a namespace's messages to the webhook its Secret names, and none of another namespace's", async () => {
    const { rest } = sandbox();
    for (const [n, path] of [
      [ns.a, '/team-a'],
      [ns.b, '/team-b'],
    ] as const)
      await rest.create(core('secrets', n), {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'ebb-notify', namespace: n },
        stringData: { url: `${base}${path}` },
      });
    const names = { a: uniqueName('na'), b: uniqueName('nb') };
    for (const k of ['a', 'b'] as const) {
      await createApp(ns[k], names[k], { replicas: 1, template: template(names[k], 'v1') });
      await settled(ns[k], names[k]);
      await patchApp(ns[k], names[k], { template: template(names[k], 'v2') });
    }
    const complete = (path: string, app: string) => () => at(path).find((b) => b.ebb.app === app && b.ebb.reason === 'RolloutComplete');
    await waitUntil("team a's completion at its webhook", complete('/team-a', names.a));
    await waitUntil("team b's completion at its webhook", complete('/team-b', names.b));
    // The installer's webhook gets both.
    await waitUntil("team a's completion at the installer's webhook", complete('/cluster', names.a));
    await waitUntil("team b's completion at the installer's webhook", complete('/cluster', names.b));
    expect(at('/team-a').every((b) => b.ebb.namespace === ns.a)).toBe(true);
    expect(at('/team-b').every((b) => b.ebb.namespace === ns.b)).toBe(true);
    expect(at('/team-b').filter((b) => b.ebb.app === names.b)).toHaveLength(1);
  });
});
