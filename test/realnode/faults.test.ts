/**
 * Faults on the real node: the kubelet killed (SIGKILL) in the middle of an in-place update, while ebb holds
 * the readiness gate False for the grace period. The sandbox starts it again as a service manager would; the
 * kubelet adopts the running containers, and the rollout converges with no gate left False.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../src/api/app-spec.ts';
import { Reason } from '../../src/api/keys.ts';
import { waitFor } from '../../src/common/wait.ts';
import type { Pod } from '../../src/kube/types.ts';
import { createApp, isSettled, patchApp, settled, uniqueName, until, useController } from '../integration/app/harness.ts';
import { gateOf, isAnnotated } from '../integration/app/pod-history.ts';
import { containerStatus, deleteApp, getPod, mainContainer, realNode, realTemplate, waitForAnswer } from './support.ts';

const ctl = useController('rn-fault');

const kubeletPid = async (): Promise<number> => Number((await readFile(realNode().kubeletPidFile, 'utf8')).trim());

describe('faults on a real node', () => {
  it('the kubelet killed during an in-place update: restarted, the rollout converges, the gate ends True', async () => {
    const name = uniqueName('rnkill');
    const spec = {
      replicas: 1,
      template: realTemplate(name, [mainContainer('v1')]),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', inPlaceUpdateStrategy: { gracePeriodSeconds: 2 } } },
    } as Partial<AppSpec>;
    await createApp(ctl.ns, name, spec);
    const before = await settled(ctl.ns, name, undefined, 90_000);
    const pod0 = before.pods[0] as Pod;

    await patchApp(ctl.ns, name, { template: realTemplate(name, [mainContainer('v2')]) });
    await waitFor(async () => (gateOf(await getPod(ctl.ns, `${name}-0`))?.status === 'False' ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the gate False',
    });
    const killed = await kubeletPid();
    process.kill(killed, 'SIGKILL');

    const after = await until(
      ctl.ns,
      name,
      (s) => s.app.metadata.generation === 2 && isSettled(s) && s.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status === 'True'),
      { timeoutMs: 120_000, what: `App ${name} converged after the kubelet restart` },
    );
    expect(await kubeletPid()).not.toBe(killed);
    const pod1 = after.pods[0] as Pod;
    expect(pod1.metadata.uid).toBe(pod0.metadata.uid);
    expect(containerStatus(pod1, 'main')?.restartCount).toBe((containerStatus(pod0, 'main')?.restartCount ?? 0) + 1);
    expect(gateOf(pod1)).toMatchObject({ status: 'True', reason: Reason.inPlaceUpdateDone });
    await waitForAnswer(String(pod1.status?.['podIP'] ?? ''), 'v2');
    await deleteApp(ctl.ns, name);
  });
});
