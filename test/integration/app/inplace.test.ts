/**
 * In-place updates on the sandbox with the real watcher and worker: every pod version is
 * recorded from a watch, every assertion reads the apiserver. Identity kept, gate False then True, highest
 * ordinal first, scale-down before in place, labels in place, fallback and refusal, tag moved to the same
 * digest, resources-only resize.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { ConditionType, EventReason, Reason } from '../../../src/api/keys.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { createApp, eventsOf, image, isSettled, patchApp, settled, template, uniqueName, unavailable, until, useController, type Snapshot } from './harness.ts';
import { gateOf, imagesOf, isAnnotated, recordPods, statusesOf, type PodHistory } from './pod-history.ts';

const ctl = useController('app-ip');

type Container = Record<string, unknown> & { name: string; image: string };
const appTemplate = (name: string, containers: Container[], labels: Record<string, string> = {}): AppSpec['template'] => ({
  metadata: { labels: { app: name, ...labels } },
  spec: { containers, terminationGracePeriodSeconds: 1 },
});
const inPlace = (policy = 'InPlaceIfPossible', extra: Record<string, unknown> = {}) =>
  ({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: policy, ...extra } } }) as Partial<AppSpec>;

/** Settled at the update revision of `generation`, with no in-place update left anywhere. */
const done = (generation: number) => (s: Snapshot) =>
  s.app.metadata.generation === generation && isSettled(s) && s.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status !== 'False');

/** The (status, reason) values the gate of `name` went through, without repeats. */
function gateSteps(h: PodHistory, name: string): string[] {
  const out: string[] = [];
  for (const s of h.of(name)) {
    const g = gateOf(s.pod);
    const v = g ? `${g.status}/${g.reason ?? ''}` : 'none';
    if (out.at(-1) !== v) out.push(v);
  }
  return out;
}

const firstIndex = (h: PodHistory, pred: (p: Pod) => boolean): number => h.seen.findIndex((s) => pred(s.pod));
const restarts = (p: Pod | undefined): number => (p ? (statusesOf(p)[0]?.restartCount ?? -1) : -1);
const uidsByName = (pods: Pod[]): Record<string, string | undefined> => Object.fromEntries(pods.map((p) => [p.metadata.name ?? '', p.metadata.uid]));

describe('in-place update with the watcher and worker', () => {
  it('3 replicas, image edit: identity kept, restartCount +1, highest ordinal first, gate False then True, annotation gone', async () => {
    const name = uniqueName('ip');
    await createApp(ctl.ns, name, { replicas: 3, ...inPlace() });
    const before = await settled(ctl.ns, name);
    const history = await recordPods(ctl.ns, name);
    let peak = 0;
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    const after = await until(ctl.ns, name, done(2), { onEach: (s) => (peak = Math.max(peak, unavailable(s))) });
    await history.stop();

    for (const [i, p] of after.pods.entries()) {
      const old = before.pods[i]!;
      expect(p.metadata).toMatchObject({ name: old.metadata.name, uid: old.metadata.uid });
      expect(p.spec?.['nodeName']).toBe(old.spec?.['nodeName']);
      expect(p.status?.['podIP']).toBe(old.status?.['podIP']);
      expect(restarts(p)).toBe(restarts(old) + 1);
      expect(imagesOf(p)).toEqual([image('v2')]);
      expect(gateOf(p)).toMatchObject({ status: 'True', reason: Reason.inPlaceUpdateDone });
      expect(isAnnotated(p)).toBe(false);
      // The gate is released (InPlaceContainersRestarting) once the kubelet has the patch, unless the new
      // container was already reported ready by then.
      expect(gateSteps(history, p.metadata.name ?? '').filter((g) => g !== `True/${Reason.inPlaceContainersRestarting}`)).toEqual([
        `True/${Reason.podCreated}`,
        `False/${Reason.startInPlaceUpdate}`,
        `True/${Reason.inPlaceUpdateDone}`,
      ]);
    }
    // While annotated the gate is False until the kubelet has observed the image patch; from then on the pod is
    // never Ready on its old container. The pods went out one at a time, from the highest ordinal down.
    const annotated = history.seen.filter((s) => isAnnotated(s.pod));
    const released = annotated.filter((s) => gateOf(s.pod)?.status === 'True');
    expect(released.length).toBeGreaterThan(0);
    for (const s of released) {
      expect(gateOf(s.pod)?.reason).toBe(Reason.inPlaceContainersRestarting);
      expect(s.pod.status?.observedGeneration).toBe(s.pod.metadata.generation);
      expect(imagesOf(s.pod)).toEqual([image('v2')]);
    }
    const readyOnOld = annotated.filter(
      (s) =>
        imagesOf(s.pod)[0] === image('v2') &&
        (s.pod.status?.observedGeneration ?? 0) >= (s.pod.metadata.generation ?? Infinity) &&
        s.pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
        statusesOf(s.pod)[0]?.image !== image('v2'),
    );
    expect(readyOnOld).toEqual([]);
    const wentOut = [2, 1, 0].map((o) => firstIndex(history, (p) => p.metadata.name === `${name}-${o}` && gateOf(p)?.status === 'False'));
    expect(wentOut.every((v) => v >= 0)).toBe(true);
    expect([...wentOut].sort((a, b) => a - b)).toEqual(wentOut);
    expect(peak).toBeLessThanOrEqual(1);
    expect(history.seen.some((s) => s.type === 'DELETED')).toBe(false);
    expect(await eventsOf(ctl.ns, name, EventReason.rolloutComplete)).toHaveLength(1);
    expect(await eventsOf(ctl.ns, name, EventReason.successfulDelete)).toHaveLength(0);
  });

  it('scale 3→1 together with an image change: scale-down first, then in place', async () => {
    const name = uniqueName('ipscale');
    await createApp(ctl.ns, name, { replicas: 3, ...inPlace() });
    const before = await settled(ctl.ns, name);
    const history = await recordPods(ctl.ns, name);
    await patchApp(ctl.ns, name, { replicas: 1, template: template(name, 'v2') });
    const after = await until(ctl.ns, name, done(2));
    await history.stop();
    expect(after.pods.map((p) => p.metadata.uid)).toEqual([before.pods[0]?.metadata.uid]);
    expect(restarts(after.pods[0])).toBe(restarts(before.pods[0]) + 1);
    const gone = [1, 2].map((o) => history.seen.findIndex((s) => s.type === 'DELETED' && s.pod.metadata.name === `${name}-${o}`));
    const started = firstIndex(history, (p) => p.metadata.name === `${name}-0` && isAnnotated(p));
    expect(gone.every((i) => i >= 0 && i < started)).toBe(true);
  });

  it('template label + image land in place; an env edit falls back to recreate; InPlaceOnly recreates nothing', async () => {
    const name = uniqueName('ipfb');
    await createApp(ctl.ns, name, { replicas: 2, ...inPlace() });
    const v1 = await settled(ctl.ns, name);

    await patchApp(ctl.ns, name, { template: appTemplate(name, [{ name: 'main', image: image('v2') }], { tier: 'back' }) });
    const labelled = await until(ctl.ns, name, done(2));
    expect(uidsByName(labelled.pods)).toEqual(uidsByName(v1.pods));
    expect(labelled.pods.every((p) => p.metadata.labels?.['tier'] === 'back' && imagesOf(p)[0] === image('v2'))).toBe(true);

    let fallbackSeen: string | undefined;
    const env = (value: string): Container => ({ name: 'main', image: image('v2'), env: [{ name: 'MODE', value }] });
    await patchApp(ctl.ns, name, { template: appTemplate(name, [env('a')], { tier: 'back' }) });
    const recreated = await until(ctl.ns, name, done(3), {
      onEach: (s) => (fallbackSeen ??= s.app.status?.conditions?.find((c) => c.type === ConditionType.inPlaceFallback && c.status === 'True')?.message),
    });
    expect(recreated.pods.every((p) => p.metadata.uid !== labelled.pods.find((o) => o.metadata.name === p.metadata.name)?.metadata.uid)).toBe(true);
    expect(fallbackSeen).toContain('/spec/containers/0/env');
    const fallbacks = await eventsOf(ctl.ns, name, EventReason.inPlaceFallback);
    expect(fallbacks.map((e) => e.related?.name).sort()).toEqual([`${name}-0`, `${name}-1`]);
    expect(fallbacks.every((e) => e.note.includes('/spec/containers/0/env'))).toBe(true);

    await patchApp(ctl.ns, name, { ...inPlace('InPlaceOnly'), template: appTemplate(name, [env('b')], { tier: 'back' }) });
    const refused = await until(
      ctl.ns,
      name,
      (s) =>
        s.app.status?.observedGeneration === 4 &&
        s.app.status.conditions?.some((c) => c.type === ConditionType.inPlaceFallback && c.reason === Reason.inPlaceOnlyRefused) === true,
    );
    await new Promise((r) => setTimeout(r, 2000));
    const still = await until(ctl.ns, name, () => true);
    expect(uidsByName(still.pods)).toEqual(uidsByName(recreated.pods));
    expect(still.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status === 'True')).toBe(true);
    expect(refused.app.status?.conditions?.find((c) => c.type === ConditionType.inPlaceFallback)?.message).toContain('InPlaceOnly');
    const refusals = (await eventsOf(ctl.ns, name, EventReason.inPlaceFallback)).filter((e) => e.action === 'Refuse');
    expect(refusals).toHaveLength(1);
  });

  it('a tag that now points to the same digest (same imageID) still completes', async () => {
    const name = uniqueName('ipdig');
    await createApp(ctl.ns, name, { replicas: 1, ...inPlace() });
    const before = await settled(ctl.ns, name);
    const imageID = statusesOf(before.pods[0]!)[0]!.imageID;
    const digest = imageID.slice(imageID.indexOf('@') + 1);
    await patchApp(ctl.ns, name, { template: appTemplate(name, [{ name: 'main', image: `${image('v2')}@${digest}` }]) });
    const after = await until(ctl.ns, name, done(2));
    const status = statusesOf(after.pods[0]!)[0]!;
    expect(status.imageID).toBe(imageID);
    expect(status.restartCount).toBe(restarts(before.pods[0]) + 1);
    expect(after.pods[0]?.metadata.uid).toBe(before.pods[0]?.metadata.uid);
    expect(gateOf(after.pods[0]!)).toMatchObject({ status: 'True', reason: Reason.inPlaceUpdateDone });
  });

  it('a resources-only change resizes in place (pods/resize) with no restart when the QoS class is unchanged', async () => {
    const name = uniqueName('iprs');
    const res = (cpu: string) => ({ requests: { cpu, memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } });
    await createApp(ctl.ns, name, { replicas: 2, ...inPlace(), template: appTemplate(name, [{ name: 'main', image: image('v1'), resources: res('100m') }]) });
    const before = await settled(ctl.ns, name);
    const history = await recordPods(ctl.ns, name);
    await patchApp(ctl.ns, name, { template: appTemplate(name, [{ name: 'main', image: image('v1'), resources: res('200m') }]) });
    const after = await until(ctl.ns, name, (s) => done(2)(s) && s.pods.every((p) => statusesOf(p)[0]?.resources?.requests?.cpu === '200m'));
    await history.stop();
    expect(uidsByName(after.pods)).toEqual(uidsByName(before.pods));
    expect(after.pods.map(restarts)).toEqual(before.pods.map(restarts));
    expect(after.pods.map((p) => statusesOf(p)[0]?.containerID)).toEqual(before.pods.map((p) => statusesOf(p)[0]?.containerID));
    expect(after.pods.every((p) => p.status?.['qosClass'] === 'Burstable')).toBe(true);
    for (const p of after.pods) {
      const managed = (p.metadata as { managedFields?: { manager: string; subresource?: string }[] }).managedFields ?? [];
      expect(managed).toContainEqual(expect.objectContaining({ manager: 'ebb', subresource: 'resize' }));
    }
    // Nothing restarted, so the gate never went False.
    expect(history.seen.every((s) => gateOf(s.pod)?.status === 'True')).toBe(true);
  });
});
