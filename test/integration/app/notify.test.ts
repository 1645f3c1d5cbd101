/**
 * Rollout notifications on the sandbox: with EBB_NOTIFY_WEBHOOK_URL set, a completed rollout reaches a local
 * webhook once, as Slack-compatible JSON naming the App and its revision; two pause steps of one revision make
 * two messages; and a namespace whose Secret ebb-notify names a webhook gets its own namespace's messages
 * there, never another's. The worker keeps each namespace's Secret (or its absence) for EBB_NOTIFY_SECRET_CACHE:
 * a wave of rollouts in one namespace reads it about once per period, and a Secret created after a rollout
 * serves the rollouts that come once the period has passed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import type { Notification } from '../../../src/workers/notify/notification.ts';
import { readApiserverRequests } from '../../../bench/lib/requests.ts';
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

/** How long the worker keeps a namespace's Secret, or its absence, here. */
const SECRET_CACHE_MS = 20_000;
/** Returns once the Secret cache's period has passed since `since` (ms): a Secret written then is seen after it. */
const pastTheCache = (since: number): Promise<void> => sleep(Math.max(0, since + SECRET_CACHE_MS - Date.now()));

// Three namespaces, one controller: the namespaces are made first, then named to the controller.
const ns = { a: '', b: '', c: '' };
const env: Record<string, string> = { EBB_NOTIFY_WEBHOOK_URL: `${base}/cluster`, EBB_NOTIFY_SECRET_CACHE: `${SECRET_CACHE_MS / 1000}s` };
beforeAll(async () => {
  ns.a = await freshNamespace('notify-a');
  ns.b = await freshNamespace('notify-b');
  ns.c = await freshNamespace('notify-c');
  env['EBB_NAMESPACES'] = `${ns.a},${ns.b},${ns.c}`;
});
useController('app-notify', { env });

const createSecret = (namespace: string, url: string): Promise<unknown> =>
  sandbox().rest.create(core('secrets', namespace), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'ebb-notify', namespace },
    stringData: { url },
  });
const secretReads = async (): Promise<number> => (await readApiserverRequests(sandbox().rest)).total.get('GET secrets') ?? 0;

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
    for (const [n, path] of [
      [ns.a, '/team-a'],
      [ns.b, '/team-b'],
    ] as const)
      await createSecret(n, `${base}${path}`);
    // The earlier tests' deliveries in namespace a found no Secret; that answer serves until the period is over.
    const secretsAt = Date.now();
    const names = { a: uniqueName('na'), b: uniqueName('nb') };
    for (const k of ['a', 'b'] as const) {
      await createApp(ns[k], names[k], { replicas: 1, template: template(names[k], 'v1') });
      await settled(ns[k], names[k]);
      await pastTheCache(secretsAt);
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

  it("use a namespace's Secret created after a rollout once the period has passed, and read it once per period in a wave", async () => {
    const complete = (app: string, revision: string) => (b: Notification['body']) =>
      b.ebb.app === app && b.ebb.reason === 'RolloutComplete' && b.ebb.updateRevision === revision;
    // A first rollout with no Secret in the namespace: the installer's webhook only, the absence kept.
    const first = uniqueName('nc');
    await createApp(ns.c, first, { replicas: 1, template: template(first, 'v1') });
    await settled(ns.c, first);
    await patchApp(ns.c, first, { template: template(first, 'v2') });
    const v2 = (await settled(ns.c, first)).app.status?.updateRevision ?? '';
    await waitUntil('the first completion at the installer', () => at('/cluster').find(complete(first, v2)));
    await createSecret(ns.c, `${base}/team-c`);
    const secretAt = Date.now();
    // A later rollout, once the period has passed since the Secret was created: it reaches the namespace's webhook.
    await pastTheCache(secretAt);
    await patchApp(ns.c, first, { template: template(first, 'v3') });
    const v3 = (await settled(ns.c, first)).app.status?.updateRevision ?? '';
    await waitUntil("the later completion at the namespace's webhook", () => at('/team-c').find(complete(first, v3)));

    // A wave: four Apps of the namespace rolled at once. Their four deliveries read the Secret at most once per
    // period they span (each delivery read it before the cache: four reads whenever the wave spans under three).
    const wave = [0, 1, 2, 3].map(() => uniqueName('nw'));
    for (const name of wave) await createApp(ns.c, name, { replicas: 1, template: template(name, 'v1') });
    for (const name of wave) await settled(ns.c, name);
    const readsBefore = await secretReads();
    const start = Date.now();
    for (const name of wave) await patchApp(ns.c, name, { template: template(name, 'v2') });
    for (const name of wave)
      await waitUntil(`${name}'s completion at the namespace's webhook`, () =>
        at('/team-c').find((b) => b.ebb.app === name && b.ebb.reason === 'RolloutComplete'),
      );
    const periods = Math.floor((Date.now() - start) / SECRET_CACHE_MS) + 1;
    const reads = (await secretReads()) - readsBefore;
    expect(reads, `${reads} Secret reads for ${wave.length} deliveries over ${periods} period(s)`).toBeLessThanOrEqual(periods);
  });
});
