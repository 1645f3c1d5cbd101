/** One notification per transition occurrence, and each destination chosen and reached on its own. */
import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import type { App } from '../../../src/api/app.ts';
import { EventReason } from '../../../src/api/keys.ts';
import type { Stored } from '../../../src/kube/types.ts';
import { EgressError } from '../../../src/workers/egress/errors.ts';
import { deliverJob } from '../../../src/workers/notify/deliver.ts';
import { destinationsOf, jobOf, jobsOf, type NotifyTargets } from '../../../src/workers/notify/destinations.ts';
import { notificationOf, type Notification } from '../../../src/workers/notify/notification.ts';
import { makeApp } from '../app/fixtures.ts';

const pause = { type: 'Normal' as const, reason: EventReason.canaryPaused, action: 'Pause', message: 'canary step 2: rollout paused' };
const abort = { type: 'Warning' as const, reason: EventReason.rolloutAborted, action: 'Abort', message: 'abort requested' };
const at = new Date('2026-01-01T00:00:00Z');

function withConditions(conditions: { type: string; status: string; lastTransitionTime: string }[]): Stored<App> {
  return { ...makeApp('web'), status: { updateRevision: 'web-2', conditions } } as unknown as Stored<App>;
}
const idOf = (app: Stored<App>, event: typeof pause | typeof abort): string => notificationOf(app, event, at)?.id ?? '';

describe('notification ids', () => {
  it('tell two pause steps of one revision apart (a resume turned Paused in between), and keep a plan tried again one', () => {
    const first = withConditions([{ type: 'Paused', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z' }]);
    const second = withConditions([{ type: 'Paused', status: 'False', lastTransitionTime: '2026-01-01T00:05:00Z' }]);
    expect(idOf(first, pause)).not.toBe(idOf(second, pause));
    // The same App state (the plan tried again after its status write failed), at another time: the same id.
    expect(notificationOf(first, pause, new Date('2026-01-01T01:00:00Z'))?.id).toBe(idOf(first, pause));
    expect(idOf(first, pause)).toMatch(/\.CanaryPaused\.web-2\.1767225600000$/);
  });

  it('tell a second abort of the same revision (after a retry turned Aborted False) from the first', () => {
    const never = withConditions([]);
    const retried = withConditions([{ type: 'Aborted', status: 'False', lastTransitionTime: '2026-01-01T00:07:00Z' }]);
    expect(idOf(never, abort)).toMatch(/\.RolloutAborted\.web-2\.0$/);
    expect(idOf(retried, abort)).not.toBe(idOf(never, abort));
  });

  it("send a background check's pause", () => {
    const n = notificationOf(
      withConditions([]),
      { type: 'Warning', reason: EventReason.analysisInconclusive, action: 'Pause', message: 'background analysis health inconclusive' },
      at,
    );
    expect(n?.body.text).toContain('rollout paused');
  });
});

describe('destinations', () => {
  const n = notificationOf(withConditions([]), abort, at) as Notification;
  const answer = (status: number) => Promise.resolve({ status, headers: {}, body: '' }) as never;

  it('one job per destination in use, each with an id of its own', () => {
    const targets: NotifyTargets = {
      cluster: { url: 'http://hook', post: () => answer(200) },
      namespace: { url: () => Promise.resolve(undefined), post: () => answer(200) },
    };
    expect(destinationsOf(targets)).toEqual(['cluster', 'namespace']);
    expect(destinationsOf({ namespace: targets.namespace })).toEqual(['namespace']);
    expect(jobsOf(n, ['cluster', 'namespace'])).toEqual([
      { id: `${n.id}.cluster`, data: { to: 'cluster', body: n.body } },
      { id: `${n.id}.namespace`, data: { to: 'namespace', body: n.body } },
    ]);
    // A job queued before destinations existed carries the body alone: the installer's webhook.
    expect(jobOf(n.body)).toEqual({ to: 'cluster', body: n.body });
  });

  it("a namespace's job goes to the URL of the notification's namespace, through the namespace's egress", async () => {
    const asked: string[] = [];
    const posted: [string, string][] = [];
    const targets: NotifyTargets = {
      namespace: {
        url: (ns) => {
          asked.push(ns);
          return Promise.resolve(ns === 'ns' ? 'https://hooks.team.example/x' : undefined);
        },
        post: (ns, url) => {
          posted.push([ns, url]);
          return answer(204);
        },
      },
    };
    const signal = new AbortController().signal;
    expect(await deliverJob({ to: 'namespace', body: n.body }, targets, signal)).toBe('sent');
    expect(posted).toEqual([['ns', 'https://hooks.team.example/x']]);
    const other = { ...n.body, ebb: { ...n.body.ebb, namespace: 'other' } };
    expect(await deliverJob({ to: 'namespace', body: other }, targets, signal)).toBe('none');
    expect(asked).toEqual(['ns', 'other']);
    expect(posted).toHaveLength(1);
  });

  it('keeps as failed at once what no retry mends, and retries the rest', async () => {
    const signal = new AbortController().signal;
    const bad: NotifyTargets = { namespace: { url: () => Promise.resolve('file:///etc/passwd'), post: () => answer(200) } };
    await expect(deliverJob({ to: 'namespace', body: n.body }, bad, signal)).rejects.toBeInstanceOf(UnrecoverableError);
    const refused: NotifyTargets = {
      namespace: { url: () => Promise.resolve('http://x.example'), post: () => Promise.reject(new EgressError('HostNotAllowed', 'not allowed')) },
    };
    await expect(deliverJob({ to: 'namespace', body: n.body }, refused, signal)).rejects.toBeInstanceOf(UnrecoverableError);
    const down: NotifyTargets = { cluster: { url: 'http://hook', post: () => answer(503) } };
    const err = await deliverJob({ to: 'cluster', body: n.body }, down, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(UnrecoverableError);
  });
});
