/**
 * A memory-limit decrease the kubelet refuses after an in-place restart (PodResizeInProgress=True, reason
 * Error), through the App planner and the fake kubelet (which refuses it as the real one does), with the
 * scenario invariants checked after every step: InPlaceIfPossible recreates the pod through the rolling
 * update; InPlaceOnly holds it at its revision, not counted as updated, with condition and one Event.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { ConditionType, EventReason, Reason } from '../../../src/api/keys.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { Scenario } from './scenario.ts';

const big = { requests: { memory: '64Mi' }, limits: { memory: '128Mi' } };
const small = { requests: { memory: '32Mi' }, limits: { memory: '64Mi' } };
const REFUSED = /cannot decrease memory limits: missing container "main" memory usage/;
const template = (tag: string, resources: typeof big) => ({
  template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: `registry.example/web:${tag}`, resources }] } },
});
const spec = (policy: string): Partial<AppSpec> =>
  ({
    replicas: 2,
    ...template('v1', big),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: policy, maxUnavailable: 1 } },
  }) as Partial<AppSpec>;

type Status = { restartCount: number; resources?: typeof big };
const container = (p: Pod): Status | undefined => ((p.status?.['containerStatuses'] ?? []) as Status[])[0];
const fallback = (s: Scenario) => s.app().status?.conditions?.find((c) => c.type === ConditionType.inPlaceFallback);

/** Converged on v1, then v2 in place: every container restarted once. */
async function restartedInPlace(policy: string): Promise<Scenario> {
  const s = new Scenario(spec(policy));
  await s.runUntil((x) => x.converged());
  s.arm({ maxUnavailable: 1 });
  const v1 = s.app().status!.updateRevision!;
  s.edit(template('v2', big));
  await s.runUntil((x) => x.converged() && x.app().status?.updateRevision !== v1);
  expect(s.pods().map((p) => container(p)?.restartCount)).toEqual([1, 1]);
  return s;
}

describe('a memory decrease the kubelet refuses after an in-place restart', () => {
  it('InPlaceIfPossible recreates each pod at the lower limit, within maxUnavailable', async () => {
    const s = await restartedInPlace('InPlaceIfPossible');
    const uids = new Set(s.pods().map((p) => p.metadata.uid));
    const v2 = s.app().status!.updateRevision!;
    s.edit(template('v2', small));
    await s.runUntil((x) => x.converged() && x.app().status?.updateRevision !== v2);
    expect(s.violations).toEqual([]);
    expect(s.peakUnavailable).toBeLessThanOrEqual(1);
    expect(s.cluster.podDeletions.sort()).toEqual(['web-0', 'web-1']);
    for (const p of s.pods()) {
      expect(uids.has(p.metadata.uid)).toBe(false);
      expect(container(p)).toMatchObject({ restartCount: 0, resources: small });
    }
    const events = s.cluster.events.filter((e) => e.event.reason === EventReason.resizeRefused);
    expect(events.map((e) => e.event.related?.name).sort()).toEqual(['web-0', 'web-1']);
    expect(events[0]?.event.message).toMatch(REFUSED);
  });

  it('a new image with the lower limit in one revision completes in place: the restarted container starts at it', async () => {
    const s = await restartedInPlace('InPlaceOnly');
    const uids = s.pods().map((p) => p.metadata.uid);
    const v2 = s.app().status!.updateRevision!;
    s.edit(template('v3', small));
    await s.runUntil((x) => x.converged() && x.app().status?.updateRevision !== v2);
    expect(s.violations).toEqual([]);
    expect(s.pods().map((p) => p.metadata.uid)).toEqual(uids);
    for (const p of s.pods()) expect(container(p)).toMatchObject({ restartCount: 2, resources: small });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.resizeRefused)).toEqual([]);
  });

  it('InPlaceOnly holds the pod at its revision: ResizeRefused condition, one Warning Event, not updated', async () => {
    const s = await restartedInPlace('InPlaceOnly');
    const uids = s.pods().map((p) => p.metadata.uid);
    const v2 = s.app().status!.updateRevision!;
    s.edit(template('v2', small));
    await s.runUntil((x) => fallback(x)?.reason === Reason.resizeRefused);
    for (let i = 0; i < 10; i++) await s.step();
    expect(s.violations).toEqual([]);
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.pods().map((p) => p.metadata.uid)).toEqual(uids);
    const status = s.app().status!;
    expect(status.updateRevision).not.toBe(v2);
    expect(status.currentRevision).toBe(v2);
    expect(status.updatedReplicas).toBe(0);
    expect(fallback(s)).toMatchObject({ status: 'True', reason: Reason.resizeRefused });
    expect(fallback(s)?.message).toMatch(/^Pod web-\d was not updated to revision .*InPlaceOnly.*/);
    expect(fallback(s)?.message).toMatch(REFUSED);
    const events = s.cluster.events.filter((e) => e.event.reason === EventReason.resizeRefused);
    expect(events).toHaveLength(1);
    expect(events[0]?.event).toMatchObject({ type: 'Warning', action: 'Refuse' });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.rolloutComplete)).toHaveLength(1);
    for (const p of s.pods()) expect(container(p)?.resources).toEqual(big);
  });
});

describe('a resize larger than the node (PodResizePending, reason Infeasible)', () => {
  // The fake kubelet's node has 1Ti of memory: a request above it is infeasible there, a wait would be forever.
  const huge = { requests: { memory: '2Ti' }, limits: { memory: '2Ti' } };
  const INFEASIBLE = /infeasible on its node: Node didn't have enough capacity: memory/;

  async function converged(policy: string): Promise<{ s: Scenario; v1: string; uids: (string | undefined)[] }> {
    const s = new Scenario(spec(policy));
    await s.runUntil((x) => x.converged());
    s.arm({ maxUnavailable: 1 });
    return { s, v1: s.app().status!.updateRevision!, uids: s.pods().map((p) => p.metadata.uid) };
  }

  it('InPlaceIfPossible recreates each pod with the new resources instead of waiting for the node', async () => {
    const { s, v1, uids } = await converged('InPlaceIfPossible');
    s.edit(template('v1', huge));
    await s.runUntil((x) => x.converged() && x.app().status?.updateRevision !== v1);
    expect(s.violations).toEqual([]);
    expect(s.cluster.podDeletions.sort()).toEqual(['web-0', 'web-1']);
    for (const p of s.pods()) expect(uids).not.toContain(p.metadata.uid);
    const events = s.cluster.events.filter((e) => e.event.reason === EventReason.resizeRefused);
    expect(events.map((e) => e.event.related?.name).sort()).toEqual(['web-0', 'web-1']);
    expect(events[0]?.event.message).toMatch(INFEASIBLE);
  });

  it('InPlaceOnly holds the pods at their revision with the ResizeRefused condition naming the node capacity', async () => {
    const { s, v1, uids } = await converged('InPlaceOnly');
    s.edit(template('v1', huge));
    await s.runUntil((x) => fallback(x)?.reason === Reason.resizeRefused);
    for (let i = 0; i < 10; i++) await s.step();
    expect(s.violations).toEqual([]);
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.pods().map((p) => p.metadata.uid)).toEqual(uids);
    expect(s.app().status).toMatchObject({ currentRevision: v1, updatedReplicas: 0 });
    expect(fallback(s)?.message).toMatch(INFEASIBLE);
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.resizeRefused)).toHaveLength(1);
  });
});
