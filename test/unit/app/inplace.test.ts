/**
 * Scenario tests of in-place updates through the App planner: plan → fake execute → fake kubelet, with the
 * invariants checked after every step (maxUnavailable counting pods updated in place, partition, paused, gate
 * False while updating) in both pod management policies.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { Annotation, ConditionType, EventReason, Reason } from '../../../src/api/keys.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { GRACE_PERIOD_WAIT, IN_PLACE_GATE } from '../../../src/workers/inplace/index.ts';
import { Scenario } from './scenario.ts';

const policies = ['OrderedReady', 'Parallel'] as const;
type Container = { name: string; image: string; [k: string]: unknown };
const web = (tag: string, extra: Partial<Container> = {}): Container => ({ name: 'main', image: `registry.example/web:${tag}`, ...extra });
const template = (containers: Container[], labels: Record<string, string> = {}) => ({
  template: { metadata: { labels: { app: 'web', ...labels } }, spec: { containers } },
});

function inPlace(spec: Partial<AppSpec> = {}, rollingUpdate: Record<string, unknown> = {}, policy = 'InPlaceIfPossible'): Partial<AppSpec> {
  return { ...spec, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: policy, ...rollingUpdate } } } as Partial<AppSpec>;
}

async function converged(spec: Partial<AppSpec>, kubelet: ConstructorParameters<typeof Scenario>[1] = {}): Promise<Scenario> {
  const s = new Scenario(spec, kubelet);
  await s.runUntil((x) => x.converged());
  return s;
}

const restarts = (p: Pod): number => ((p.status?.['containerStatuses'] ?? []) as { restartCount: number }[])[0]?.restartCount ?? -1;
const gate = (p: Pod) => p.status?.conditions?.find((c) => c.type === IN_PLACE_GATE);
const byName = (s: Scenario) => new Map(s.pods().map((p) => [p.metadata.name ?? '', p]));

/** Pod names in the order their in-place updates started. */
function starts(s: Scenario): string[] {
  return s.plans.flatMap((p) => p.actions.flatMap((a) => (a.kind === 'inPlaceStep' && a.step.kind === 'start' ? [a.name] : [])));
}

/** No pod left updating: no state annotation, every gate True. */
function clean(s: Scenario): void {
  for (const p of s.pods()) {
    expect(p.metadata.annotations?.[Annotation.inPlaceUpdateState]).toBeUndefined();
    expect(gate(p)?.status).toBe('True');
  }
}

async function updated(s: Scenario, from: string): Promise<void> {
  await s.runUntil((x) => x.converged() && x.app().status?.updateRevision !== from);
}

describe.each(policies)('%s, InPlaceIfPossible', (podManagementPolicy) => {
  it.each([1, 2, '40%'])('updates images in place from the highest ordinal, maxUnavailable %s', async (maxUnavailable) => {
    const s = await converged(inPlace({ replicas: 5, podManagementPolicy }, { maxUnavailable }));
    const before = byName(s);
    const v1 = s.app().status!.updateRevision!;
    const limit = maxUnavailable === '40%' ? 2 : Number(maxUnavailable);
    s.arm({ maxUnavailable: limit });
    s.edit(template([web('v2')]));
    await updated(s, v1);
    expect(s.violations).toEqual([]);
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.peakUnavailable).toBe(limit);
    for (const [name, p] of byName(s)) {
      expect(p.metadata.uid).toBe(before.get(name)?.metadata.uid);
      expect(restarts(p)).toBe(restarts(before.get(name)!) + 1);
      expect(gate(p)).toMatchObject({ status: 'True', reason: Reason.inPlaceUpdateDone });
    }
    expect(starts(s).slice(0, 2)).toEqual(['web-4', 'web-3']);
    expect(new Set(starts(s)).size).toBe(5);
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.rolloutComplete)).toHaveLength(1);
    clean(s);
  });

  it('writes the App status about once per pod updated in place', async () => {
    const s = await converged(inPlace({ replicas: 6, podManagementPolicy }, { maxUnavailable: 1 }));
    const v1 = s.app().status!.updateRevision!;
    const before = s.cluster.calls.count('apps.patchStatus');
    s.edit(template([web('v2')]));
    await updated(s, v1);
    // Each pod's start is counted in the status written with it: pod i done and pod i-1 started is one write,
    // plus the new revision's first write. Counting pod by pod (start, relabel, ready) was 3 writes per pod.
    expect(s.cluster.calls.count('apps.patchStatus') - before).toBeLessThanOrEqual(6 + 1);
    expect(s.app().status).toMatchObject({ updatedReplicas: 6, readyReplicas: 6, currentRevision: s.app().status?.updateRevision });
  });

  it('keeps pods below the partition untouched, then updates them in place when it drops', async () => {
    const s = await converged(inPlace({ replicas: 5, podManagementPolicy }, { partition: 3 }));
    s.arm({ maxUnavailable: 1, partition: 3 });
    s.edit(template([web('v2')]));
    await s.runUntil((x) => x.app().status?.updatedReplicas === 2 && x.app().status?.readyReplicas === 5);
    for (let i = 0; i < 5; i++) await s.step();
    expect(s.violations).toEqual([]);
    expect(starts(s)).toEqual(['web-4', 'web-3']);
    s.arm({ maxUnavailable: 1 });
    s.edit({ updateStrategy: { rollingUpdate: { partition: 0 } } });
    await s.runUntil((x) => x.converged() && x.app().status?.currentReplicas === 5);
    expect(starts(s)).toEqual(['web-4', 'web-3', 'web-2', 'web-1', 'web-0']);
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.violations).toEqual([]);
  });

  it('paused: no in-place update starts (one under way finishes), scaling goes on; resuming completes', async () => {
    const s = await converged(inPlace({ replicas: 4, podManagementPolicy }));
    s.arm({ maxUnavailable: 1 });
    s.edit(template([web('v2')]));
    await s.runUntil((x) => starts(x).length === 1);
    s.edit({ updateStrategy: { rollingUpdate: { paused: true } } });
    for (let i = 0; i < 10; i++) await s.step();
    expect(starts(s)).toEqual(['web-3']);
    const pausedPods = s.pods();
    expect(pausedPods.every((p) => p.metadata.annotations?.[Annotation.inPlaceUpdateState] === undefined)).toBe(true);
    s.edit({ replicas: 5 });
    await s.runUntil((x) => x.pods().length === 5 && x.app().status?.readyReplicas === 5);
    expect(starts(s)).toEqual(['web-3']);
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => x.converged());
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.violations).toEqual([]);
    clean(s);
  });

  it('canary steps: one pod in place, pause, then the rest', async () => {
    const steps = [{ replicas: 1 }, { pause: {} }, { replicas: '100%' }];
    const s = await converged(inPlace({ replicas: 3, podManagementPolicy }, { canary: { steps } }));
    s.arm({ maxUnavailable: 1 });
    s.edit(template([web('v2')]));
    await s.runUntil((x) => x.app().spec.updateStrategy?.rollingUpdate?.paused === true && x.app().status?.readyReplicas === 3);
    for (let i = 0; i < 5; i++) await s.step();
    expect(starts(s)).toEqual(['web-2']);
    expect(s.app().status).toMatchObject({ updatedReplicas: 1, canary: { step: 1 } });
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => x.converged());
    expect(starts(s)).toEqual(['web-2', 'web-1', 'web-0']);
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.violations).toEqual([]);
  });

  it('scales down first, then updates in place', async () => {
    const s = await converged(inPlace({ replicas: 3, podManagementPolicy }));
    s.edit({ replicas: 1, ...template([web('v2')]) });
    const uid = s.pods()[0]?.metadata.uid;
    await s.runUntil((x) => x.converged() && x.pods().length === 1 && restarts(x.pods()[0]!) === 1);
    expect(s.cluster.podDeletions).toEqual(['web-2', 'web-1']);
    expect(s.pods()[0]?.metadata.uid).toBe(uid);
    const actions = s.plans.flatMap((p) => p.actions);
    const lastDelete = actions.findLastIndex((a) => a.kind === 'deletePod');
    const firstStart = actions.findIndex((a) => a.kind === 'inPlaceStep');
    expect(lastDelete).toBeLessThan(firstStart);
    expect(s.violations).toEqual([]);
  });
});

describe('what changes in place', () => {
  it('a template label edit and an image edit land together without recreation', async () => {
    const s = await converged(inPlace({ replicas: 2 }));
    s.arm({ maxUnavailable: 1 });
    s.edit(template([web('v2')], { tier: 'back' }));
    await s.runUntil((x) => x.converged() && x.pods().every((p) => p.metadata.labels?.['tier'] === 'back'));
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.pods().map(restarts)).toEqual([1, 1]);
    expect(s.violations).toEqual([]);
  });

  it('a label-only edit restarts nothing and leaves the gate alone', async () => {
    const s = await converged(inPlace({ replicas: 2 }));
    s.arm({ maxUnavailable: 1 });
    s.edit(template([web('v1')], { tier: 'back' }));
    await s.runUntil((x) => x.converged() && x.pods().every((p) => p.metadata.labels?.['tier'] === 'back'));
    expect(s.pods().map(restarts)).toEqual([0, 0]);
    expect(s.pods().map((p) => gate(p)?.reason)).toEqual([Reason.podCreated, Reason.podCreated]);
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.rolloutComplete)).toHaveLength(1);
  });

  it('a resources-only change resizes with no restart when the QoS class stays', async () => {
    const res = (cpu: string) => ({ resources: { requests: { cpu, memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } } });
    const s = await converged(inPlace({ replicas: 2, ...template([web('v1', res('100m'))]) }));
    s.edit(template([web('v1', res('200m'))]));
    await s.runUntil((x) => x.converged() && x.cluster.calls.count('pods.resize') === 2);
    expect(s.pods().map(restarts)).toEqual([0, 0]);
    expect(s.cluster.podDeletions).toEqual([]);
  });

  it('an env edit falls back to recreation with the InPlaceFallback condition, Event and log path', async () => {
    const s = await converged(inPlace({ replicas: 2 }));
    s.edit(template([web('v1', { env: [{ name: 'A', value: '1' }] })]));
    await s.runUntil((x) => x.cluster.podDeletions.length === 1);
    await s.step();
    const cond = s.app().status?.conditions?.find((c) => c.type === ConditionType.inPlaceFallback);
    expect(cond).toMatchObject({ status: 'True', reason: Reason.inPlaceNotPossible });
    expect(cond?.message).toContain('/spec/containers/0/env');
    await s.runUntil((x) => x.converged());
    expect(s.cluster.podDeletions).toEqual(['web-1', 'web-0']);
    const fallbacks = s.cluster.events.filter((e) => e.event.reason === EventReason.inPlaceFallback);
    expect(fallbacks.map((e) => e.event.related?.name)).toEqual(['web-1', 'web-0']);
    expect(s.app().status?.conditions?.find((c) => c.type === ConditionType.inPlaceFallback)).toMatchObject({
      status: 'False',
      reason: Reason.noFallbackPending,
    });
  });

  it('InPlaceOnly refuses an env edit: nothing recreated, condition and one Event', async () => {
    const s = await converged(inPlace({ replicas: 2 }, {}, 'InPlaceOnly'));
    const uids = s.pods().map((p) => p.metadata.uid);
    s.edit(template([web('v2', { env: [{ name: 'A', value: '1' }] })]));
    for (let i = 0; i < 8; i++) await s.step();
    expect(s.pods().map((p) => p.metadata.uid)).toEqual(uids);
    expect(s.cluster.podDeletions).toEqual([]);
    expect(starts(s)).toEqual([]);
    expect(s.app().status?.conditions?.find((c) => c.type === ConditionType.inPlaceFallback)).toMatchObject({
      status: 'True',
      reason: Reason.inPlaceOnlyRefused,
    });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.inPlaceFallback)).toHaveLength(1);
  });

  it('a tag moved to the same digest still completes (restart, same imageID)', async () => {
    const s = await converged(inPlace({ replicas: 1 }), { aliases: { 'registry.example/web:v2': 'registry.example/web:v1' } });
    const id = (p: Pod) => ((p.status?.['containerStatuses'] ?? []) as { imageID: string }[])[0]?.imageID;
    const before = id(s.pods()[0]!);
    s.edit(template([web('v2')]));
    await s.runUntil((x) => x.converged() && restarts(x.pods()[0]!) === 1);
    expect(id(s.pods()[0]!)).toBe(before);
    clean(s);
  });
});

describe('grace period', () => {
  it('holds the gate False gracePeriodSeconds before the image changes, as a timer', async () => {
    const s = await converged(inPlace({ replicas: 1 }, { inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } }));
    s.arm({ maxUnavailable: 1 });
    s.edit(template([web('v2')]));
    let falseAt: number | undefined;
    let patchedAt: number | undefined;
    await s.runUntil((x) => {
      const p = x.pods()[0]!;
      if (gate(p)?.status === 'False') falseAt ??= Date.parse(gate(p)?.lastTransitionTime ?? '');
      if (JSON.stringify(p.spec).includes('web:v2')) patchedAt ??= x.clock.now().getTime();
      return x.converged() && restarts(p) === 1;
    });
    expect(patchedAt! - falseAt!).toBeGreaterThanOrEqual(5000);
    // The plan that starts the update sets the timer for the end of the grace period; the plans until then
    // only wait (no step, no busy worker); the image patch comes once it is over.
    const graceWaits = s.plans.filter((p) => p.wait?.reason === GRACE_PERIOD_WAIT);
    expect(graceWaits[0]?.actions.map((a) => (a.kind === 'inPlaceStep' ? a.step.kind : a.kind))).toContain('start');
    expect(graceWaits[0]?.wait?.afterMs).toBe(5000);
    expect(graceWaits.slice(1).every((p) => p.actions.every((a) => a.kind !== 'inPlaceStep'))).toBe(true);
    expect(s.violations).toEqual([]);
  });
});
