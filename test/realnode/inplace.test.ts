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
import { gateOf, isAnnotated } from '../integration/app/pod-history.ts';
import { appImage, containerStatus, deleteApp, httpGet, mainContainer, realNode, realTemplate, sidecar, waitForAnswer } from './support.ts';

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

describe('in-place update on a real node', () => {
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
