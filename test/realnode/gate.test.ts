/**
 * The readiness gate on the real kubelet: while ebb holds `InPlaceUpdateReady` False for the grace period, the
 * kubelet reports the pod not Ready (so Services stop sending it traffic) before the container is touched;
 * the kubelet's own status writes keep the gate; the pod is Ready again once the update is done.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../src/api/app-spec.ts';
import { Reason } from '../../src/api/keys.ts';
import type { Pod } from '../../src/kube/types.ts';
import { createApp, isSettled, patchApp, settled, uniqueName, until, useController } from '../integration/app/harness.ts';
import { gateOf, imagesOf, isAnnotated, recordPods } from '../integration/app/pod-history.ts';
import { appImage, containerStatus, deleteApp, isReady, mainContainer, realTemplate, waitForAnswer } from './support.ts';

const ctl = useController('rn-gate');

const GRACE_S = 4;
const spec = (name: string): Partial<AppSpec> => ({
  replicas: 1,
  template: realTemplate(name, [mainContainer('v1')]),
  updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', inPlaceUpdateStrategy: { gracePeriodSeconds: GRACE_S } } },
});

const readyCondition = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'Ready');

describe('readiness gate on a real node', () => {
  it(`gracePeriodSeconds ${GRACE_S}: the kubelet reports the pod not Ready before its container restarts`, async () => {
    const name = uniqueName('rngate');
    await createApp(ctl.ns, name, spec(name));
    const before = await settled(ctl.ns, name, undefined, 90_000);
    const oldContainer = containerStatus(before.pods[0] as Pod, 'main')?.containerID;
    expect(oldContainer).toBeDefined();
    const history = await recordPods(ctl.ns, name);
    await patchApp(ctl.ns, name, { template: realTemplate(name, [mainContainer('v2')]) });
    const after = await until(
      ctl.ns,
      name,
      (s) => s.app.metadata.generation === 2 && isSettled(s) && s.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status === 'True'),
      { timeoutMs: 90_000 },
    );
    await history.stop();

    const out = history.seen.find((s) => gateOf(s.pod)?.status === 'False');
    const patched = history.seen.find((s) => imagesOf(s.pod)[0] === appImage('v2'));
    if (!out || !patched) throw new Error('the gate never went False, or the image never changed');
    expect(gateOf(out.pod)?.reason).toBe(Reason.startInPlaceUpdate);
    expect(patched.at - out.at).toBeGreaterThanOrEqual(GRACE_S * 1000);
    // Within the grace period the kubelet turned Ready False for the gate, with the old container still running.
    const held = history.seen.find((s) => s.at < patched.at && gateOf(s.pod)?.status === 'False' && readyCondition(s.pod)?.status === 'False');
    expect(held).toBeDefined();
    expect(readyCondition(held?.pod as Pod)?.reason).toBe('ReadinessGatesNotReady');
    expect(containerStatus(held?.pod as Pod, 'main')).toMatchObject({ containerID: oldContainer, ready: true });
    // Once Ready went False for the gate it stayed False until the update was done (the kubelet kept the gate).
    const heldFrom = history.seen.indexOf(held as (typeof history.seen)[number]);
    const doneAt = history.seen.findIndex((s) => gateOf(s.pod)?.status === 'True' && s.at > patched.at);
    expect(history.seen.slice(heldFrom, doneAt).every((s) => !isReady(s.pod))).toBe(true);
    expect(isReady(after.pods[0] as Pod)).toBe(true);
    await waitForAnswer(String(after.pods[0]?.status?.['podIP'] ?? ''), 'v2');
    await deleteApp(ctl.ns, name);
  });
});
