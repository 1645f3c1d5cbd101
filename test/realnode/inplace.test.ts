/**
 * An in-place image update on the real kubelet, driven by the real watcher and worker: the pod keeps its UID
 * and IP, only the changed container restarts (restartCount +1, a new imageID), the sidecar keeps its
 * containerID, the pod answers the new version, and the App's status and Events say the rollout completed.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../src/api/app-spec.ts';
import { EventReason, Reason } from '../../src/api/keys.ts';
import type { Pod } from '../../src/kube/types.ts';
import { createApp, eventsOf, isSettled, patchApp, settled, uniqueName, until, useController, type Snapshot } from '../integration/app/harness.ts';
import { gateOf, imagesOf, isAnnotated, recordPods, type Seen } from '../integration/app/pod-history.ts';
import { appImage, containerStatus, deleteApp, httpGet, isReady, mainContainer, realNode, realTemplate, sidecar, waitForAnswer } from './support.ts';

const ctl = useController('rn-ip');

const inPlace = (policy = 'InPlaceIfPossible'): Partial<AppSpec> =>
  ({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: policy } } }) as Partial<AppSpec>;

/** Settled at `generation`, no in-place update left, the gate True. */
const done = (generation: number) => (s: Snapshot) =>
  s.app.metadata.generation === generation && isSettled(s) && s.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status === 'True');

const podIP = (p: Pod | undefined): string => String(p?.status?.['podIP'] ?? '');

/** The pod kept its identity and address; only `main` restarted, on the new image; the sidecar did not. */
async function expectUpdatedInPlace(old: Pod | undefined, p: Pod): Promise<void> {
  if (!old) throw new Error(`no pod before the update for ${p.metadata.name ?? ''}`);
  expect(p.metadata.uid).toBe(old.metadata.uid);
  expect(podIP(p)).toBe(podIP(old));
  const [m0, m1] = [containerStatus(old, 'main'), containerStatus(p, 'main')];
  const [s0, s1] = [containerStatus(old, 'side'), containerStatus(p, 'side')];
  expect(m1?.restartCount).toBe((m0?.restartCount ?? 0) + 1);
  expect(m1?.image).toBe(appImage('v2'));
  expect(m1?.imageID).not.toBe(m0?.imageID);
  expect(m1?.containerID).not.toBe(m0?.containerID);
  expect(s1?.containerID).toBe(s0?.containerID);
  expect(s1?.restartCount).toBe(s0?.restartCount);
  expect(gateOf(p)).toMatchObject({ status: 'True', reason: Reason.inPlaceUpdateDone });
  await waitForAnswer(podIP(p), 'v2');
  expect(await httpGet(podIP(p), 8081)).toBe('v3');
}

/** `main` runs a new instance of the v2 image, and it is ready. */
const runsNewReady = (p: Pod, oldContainer: string | undefined): boolean => {
  const m = containerStatus(p, 'main');
  return m?.image === appImage('v2') && m.containerID !== oldContainer && m.ready === true;
};

/**
 * The milestones of the pod's update, and `window`: its versions from the first the kubelet reported not Ready
 * after the gate went False, to the end.
 */
function milestones(seen: Seen[], oldContainer: string | undefined) {
  const gateOut = seen.findIndex((s) => gateOf(s.pod)?.status === 'False');
  const outAt = seen.findIndex((s, i) => i >= gateOut && gateOut >= 0 && !isReady(s.pod));
  const observedAt = seen.findIndex(
    (s) => imagesOf(s.pod)[0] === appImage('v2') && (s.pod.status?.observedGeneration ?? 0) >= (s.pod.metadata.generation ?? Infinity),
  );
  const window = seen.slice(Math.max(0, outAt));
  const patched = seen.find((s) => imagesOf(s.pod)[0] === appImage('v2'));
  const released = window.find((s) => gateOf(s.pod)?.status === 'True' && isAnnotated(s.pod));
  const newReady = window.find((s) => runsNewReady(s.pod, oldContainer));
  const finished = window.find((s) => !isAnnotated(s.pod));
  const readyAgain = window.find((s) => isReady(s.pod));
  return { gateOut, outAt, observedAt, window, patched, released, newReady, finished, readyAgain };
}

describe('in-place update on a real node', () => {
  it('the gate is released once the kubelet has the patch, yet the pod is never Ready on the old container or before the new one is ready', async () => {
    const name = uniqueName('rnearly');
    // A grace period, so that the kubelet has the pod out of Ready before the image patch (ebb's promise
    // starts there); the kubelet takes up to about a relist period to act on the gate.
    const strategy = { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', inPlaceUpdateStrategy: { gracePeriodSeconds: 2 } } };
    await createApp(ctl.ns, name, { replicas: 1, template: realTemplate(name, [mainContainer('v1')]), updateStrategy: strategy } as Partial<AppSpec>);
    const before = await settled(ctl.ns, name, undefined, 90_000);
    const oldContainer = containerStatus(before.pods[0] as Pod, 'main')?.containerID;
    expect(oldContainer).toBeDefined();
    const history = await recordPods(ctl.ns, name);
    await patchApp(ctl.ns, name, { template: realTemplate(name, [mainContainer('v2')]) });
    const after = await until(ctl.ns, name, done(2), { timeoutMs: 90_000, what: `App ${name} updated in place` });
    await history.stop();

    const m = milestones(history.of(`${name}-0`), oldContainer);
    if (m.outAt < 0 || m.observedAt < 0 || !m.patched || !m.released || !m.newReady || !m.finished || !m.readyAgain) {
      throw new Error(
        `an update milestone is missing: ${JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v === 'number' ? v : v !== undefined])))}`,
      );
    }
    // The kubelet had the pod out of Ready before it acted on the image patch (and so before it stopped the old
    // container); from then on the pod is Ready only on the new, ready container.
    expect(m.outAt).toBeLessThanOrEqual(m.observedAt);
    const offending = m.window.filter((s) => isReady(s.pod) && !runsNewReady(s.pod, oldContainer));
    expect(offending.map((s) => containerStatus(s.pod, 'main'))).toEqual([]);
    // Released early (with the kubelet's status for the patched spec), and finished only on the new container.
    expect(gateOf(m.released.pod)?.reason).toBe(Reason.inPlaceContainersRestarting);
    expect(m.released.pod.status?.observedGeneration).toBe(m.released.pod.metadata.generation);
    expect(m.released.at).toBeLessThanOrEqual(m.finished.at);
    expect(runsNewReady(m.finished.pod, oldContainer)).toBe(true);
    expect(gateOf(after.pods[0] as Pod)).toMatchObject({ status: 'True', reason: Reason.inPlaceUpdateDone });
    const beforeNew = !runsNewReady(m.released.pod, oldContainer) && m.released.at <= m.newReady.at;
    process.stdout.write(
      `early gate: image patch → gate released ${m.released.at - m.patched.at} ms (before the new container was reported: ${String(beforeNew)}), ` +
        `→ new container ready ${m.newReady.at - m.patched.at} ms, → pod Ready ${m.readyAgain.at - m.patched.at} ms, → annotation removed ${m.finished.at - m.patched.at} ms\n`,
    );
    await waitForAnswer(String(after.pods[0]?.status?.['podIP'] ?? ''), 'v2');
    await deleteApp(ctl.ns, name);
  });

  it('image v1 → v2: same pods, only that container restarted, the sidecar untouched, HTTP answers v2', async () => {
    const name = uniqueName('rn');
    const replicas = 2;
    await createApp(ctl.ns, name, { replicas, template: realTemplate(name, [mainContainer('v1'), sidecar()]), ...inPlace() });
    const before = await settled(ctl.ns, name, undefined, 90_000);
    for (const p of before.pods) {
      expect(p.spec?.['nodeName']).toBe(realNode().name);
      expect(await httpGet(podIP(p), 8080)).toBe('v1');
    }

    await patchApp(ctl.ns, name, { template: realTemplate(name, [mainContainer('v2'), sidecar()]) });
    const after = await until(ctl.ns, name, done(2), { timeoutMs: 90_000, what: `App ${name} updated in place` });

    for (const [i, p] of after.pods.entries()) await expectUpdatedInPlace(before.pods[i], p);
    const st = after.app.status;
    expect(st).toMatchObject({ replicas, readyReplicas: replicas, updatedReplicas: replicas });
    expect(st?.currentRevision).toBe(st?.updateRevision);
    expect(st?.currentRevision).not.toBe(before.app.status?.currentRevision);
    expect(await eventsOf(ctl.ns, name, EventReason.rolloutComplete)).toHaveLength(1);
    expect(await eventsOf(ctl.ns, name, EventReason.successfulDelete)).toHaveLength(0);
    await deleteApp(ctl.ns, name);
  });
});
