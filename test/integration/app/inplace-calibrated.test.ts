/**
 * An in-place update on a simulated node with the benchmarks' calibrated profile (`realisticProfile`: a gate's
 * change reaches Ready 2 s later, a restart takes 2 s), where the fast test timings hide the order of the
 * kubelet's status writes: the status that first reports the image patch computes Ready from the gate as it is
 * (False), so ebb's early release is never taken back (no `InPlaceGateHeld`), the pod is never Ready on its old
 * container once the patch is observed, and Ready comes in the same status as the new container ready.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { appRef } from '../../../src/api/group.ts';
import { Reason } from '../../../src/api/keys.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { realisticProfile } from '../../../harness/sandbox/node/timings.ts';
import { startDedicatedNode, type DedicatedNode } from '../imagelist/dedicated-node.ts';
import { sandbox } from '../support.ts';
import { createApp, image, isSettled, patchApp, settled, uniqueName, until, useController } from './harness.ts';
import { gateOf, imagesOf, isAnnotated, recordPods, statusesOf, type Seen } from './pod-history.ts';

const ctl = useController('ip-cal');

const isReady = (p: Pod): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
const observed = (p: Pod): boolean => (p.status?.observedGeneration ?? 0) >= (p.metadata.generation ?? Infinity);
const newContainerReady = (p: Pod, img: string): boolean => statusesOf(p)[0]?.image === img && statusesOf(p)[0]?.ready === true;

function gateSteps(versions: Seen[]): string[] {
  const out: string[] = [];
  for (const s of versions) {
    const g = gateOf(s.pod);
    const v = g ? `${g.status}/${g.reason ?? ''}` : 'none';
    if (out.at(-1) !== v) out.push(v);
  }
  return out;
}

describe('in place on the calibrated simulated kubelet', () => {
  let node: DedicatedNode | undefined;
  let app = '';

  beforeAll(async () => {
    // The profile the benchmarks run, with a short pull: the pull is not what this file checks.
    node = await startDedicatedNode({ prefix: 'it-ipcal', index: 45, timings: { ...realisticProfile, pullMs: 300 } });
  });

  afterAll(async () => {
    if (app)
      await sandbox()
        .rest.delete(appRef(ctl.ns, app))
        .catch(() => undefined);
    await node?.stop();
  });

  it('the early gate is never held again and the pod is never Ready on its old container', async () => {
    const n = node!;
    app = uniqueName('ipcal');
    const template = (tag: string): AppSpec['template'] => ({
      metadata: { labels: { app } },
      spec: { containers: [{ name: 'main', image: image(tag) }], terminationGracePeriodSeconds: 1, ...n.placement },
    });
    await createApp(ctl.ns, app, {
      replicas: 2,
      template: template('v1'),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
    });
    const before = await settled(ctl.ns, app, undefined, 90_000);
    const history = await recordPods(ctl.ns, app);
    await patchApp(ctl.ns, app, { template: template('v2') });
    const after = await until(ctl.ns, app, (s) => s.app.metadata.generation === 2 && isSettled(s) && s.pods.every((p) => !isAnnotated(p)), {
      timeoutMs: 90_000,
      what: 'updated in place',
    });
    await history.stop();

    const v2 = image('v2');
    expect(after.pods.map((p) => p.metadata.uid)).toEqual(before.pods.map((p) => p.metadata.uid));
    for (const p of after.pods) {
      const versions = history.of(p.metadata.name ?? '');
      // Released early (unless ebb saw the new container ready first, on a busy machine), never held again.
      expect(gateSteps(versions).filter((g) => g !== `True/${Reason.inPlaceContainersRestarting}`)).toEqual([
        `True/${Reason.podCreated}`,
        `False/${Reason.startInPlaceUpdate}`,
        `True/${Reason.inPlaceUpdateDone}`,
      ]);
      // Once the kubelet reports the patch, Ready only with the new container ready.
      const readyOnOld = versions.filter((s) => imagesOf(s.pod)[0] === v2 && observed(s.pod) && isReady(s.pod) && !newContainerReady(s.pod, v2));
      expect(readyOnOld).toEqual([]);
      // With the gate released by then, the status that reports the new container ready is Ready: no gate delay.
      const first = versions.find((s) => newContainerReady(s.pod, v2));
      expect(first).toBeDefined();
      if (first && gateOf(first.pod)?.status === 'True') expect(isReady(first.pod)).toBe(true);
    }
  });
});
