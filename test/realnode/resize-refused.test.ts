/**
 * A memory decrease the real kubelet refuses after an in-place restart: image v1 → v2 in place (the container
 * restarts), then a lower memory limit. The kubelet keeps PodResizeInProgress=True with reason Error and the
 * old limit. InPlaceIfPossible recreates the pod, which starts at the lower limit; InPlaceOnly holds it at
 * its revision (not counted as updated) with the ResizeRefused condition and a Warning Event quoting the kubelet.
 * A cpu request above the node's allocatable is reported Infeasible by the kubelet, and held the same way.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../src/api/app-spec.ts';
import { ConditionType, EventReason, Reason } from '../../src/api/keys.ts';
import type { Pod } from '../../src/kube/types.ts';
import { createApp, eventsOf, isSettled, patchApp, settled, uniqueName, until, useController, type Snapshot } from '../integration/app/harness.ts';
import { gateOf, isAnnotated } from '../integration/app/pod-history.ts';
import { containerStatus, deleteApp, mainContainer, realTemplate } from './support.ts';

const ctl = useController('rn-rr');

const CGROUP_ROOT = '/ebb-real-node-0';
const MI = 2 ** 20;
const REFUSED = 'cannot decrease memory limits: missing container "main" memory usage';

const resources = (memoryLimit: string) => ({ requests: { cpu: '100m', memory: '32Mi' }, limits: { memory: memoryLimit } });
const template = (name: string, tag: 'v1' | 'v2', memoryLimit: string): AppSpec['template'] =>
  realTemplate(name, [mainContainer(tag, { resources: resources(memoryLimit) })]);

/** memory.limit_in_bytes of the pod's main container (cgroup v1: <root>/kubepods/burstable/pod<uid>/<id>). */
async function memoryLimit(pod: Pod): Promise<number> {
  const id = (containerStatus(pod, 'main')?.containerID ?? '').replace(/^containerd:\/\//, '');
  const dir = join('/sys/fs/cgroup/memory', CGROUP_ROOT, 'kubepods', 'burstable', `pod${pod.metadata.uid ?? ''}`, id);
  return Number((await readFile(join(dir, 'memory.limit_in_bytes'), 'utf8')).trim());
}

const done = (generation: number) => (s: Snapshot) =>
  s.app.metadata.generation === generation && isSettled(s) && s.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status === 'True');
const limitOf = (p: Pod): string | undefined => (containerStatus(p, 'main')?.resources as { limits?: { memory?: string } } | undefined)?.limits?.memory;
const fallback = (s: Snapshot) => s.app.status?.conditions?.find((c) => c.type === ConditionType.inPlaceFallback);

/** An App of one pod at 128Mi, updated in place to v2: its container restarted once. */
async function restartedInPlace(name: string, policy: string): Promise<Pod> {
  await createApp(ctl.ns, name, {
    replicas: 1,
    template: template(name, 'v1', '128Mi'),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: policy } },
  } as Partial<AppSpec>);
  const before = await settled(ctl.ns, name, undefined, 90_000);
  await patchApp(ctl.ns, name, { template: template(name, 'v2', '128Mi') });
  const after = await until(ctl.ns, name, done(2), { timeoutMs: 90_000, what: `App ${name} updated in place` });
  const pod = after.pods[0] as Pod;
  expect(pod.metadata.uid).toBe(before.pods[0]?.metadata.uid);
  expect(containerStatus(pod, 'main')?.restartCount).toBe(1);
  expect(await memoryLimit(pod)).toBe(128 * MI);
  return pod;
}

describe('a memory decrease after an in-place restart, on a real node', () => {
  it('InPlaceIfPossible: the refused resize is recreated, and the new pod runs at the lower limit', async () => {
    const name = uniqueName('rnrr');
    const old = await restartedInPlace(name, 'InPlaceIfPossible');
    await patchApp(ctl.ns, name, { template: template(name, 'v2', '64Mi') });
    const after = await until(ctl.ns, name, (s) => done(3)(s) && s.pods.every((p) => p.metadata.uid !== old.metadata.uid && limitOf(p) === '64Mi'), {
      timeoutMs: 120_000,
      what: `App ${name} recreated at 64Mi`,
    });
    const pod = after.pods[0] as Pod;
    expect(containerStatus(pod, 'main')?.restartCount).toBe(0);
    expect(await memoryLimit(pod)).toBe(64 * MI);
    expect(after.app.status).toMatchObject({ replicas: 1, updatedReplicas: 1 });
    expect(after.app.status?.currentRevision).toBe(after.app.status?.updateRevision);
    const events = await eventsOf(ctl.ns, name, EventReason.resizeRefused);
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events[0]?.type).toBe('Warning');
    expect(events[0]?.note).toContain(REFUSED);
    await deleteApp(ctl.ns, name);
  });

  it('InPlaceOnly: the pod is held at its revision, with the ResizeRefused condition and a Warning Event', async () => {
    const name = uniqueName('rnrr');
    const old = await restartedInPlace(name, 'InPlaceOnly');
    await patchApp(ctl.ns, name, { template: template(name, 'v2', '64Mi') });
    const held = await until(ctl.ns, name, (s) => s.app.status?.observedGeneration === 3 && fallback(s)?.reason === Reason.resizeRefused, {
      timeoutMs: 90_000,
      what: `App ${name} holds the refused pod`,
    });
    const pod = held.pods[0] as Pod;
    expect(pod.metadata.uid).toBe(old.metadata.uid);
    expect(pod.status?.conditions?.find((c) => c.type === 'PodResizeInProgress')).toMatchObject({ status: 'True', reason: 'Error', message: REFUSED });
    expect(limitOf(pod)).toBe('128Mi');
    expect(await memoryLimit(pod)).toBe(128 * MI);
    expect(fallback(held)?.message).toContain(pod.metadata.name ?? '');
    expect(fallback(held)?.message).toContain(REFUSED);
    const st = held.app.status;
    expect(st?.updatedReplicas).toBe(0);
    expect(st?.currentRevision).not.toBe(st?.updateRevision);
    const events = await eventsOf(ctl.ns, name, EventReason.resizeRefused);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', action: 'Refuse' });
    expect(events[0]?.note).toContain(REFUSED);
    expect(await eventsOf(ctl.ns, name, EventReason.successfulDelete)).toHaveLength(0);
    await deleteApp(ctl.ns, name);
  });
});

describe('a resize larger than the node, on a real node', () => {
  it('InPlaceOnly: the kubelet says Infeasible, and the pod is held with the ResizeRefused condition quoting it', async () => {
    const name = uniqueName('rnrr');
    const cpu = (request: string) =>
      realTemplate(name, [mainContainer('v1', { resources: { requests: { cpu: request, memory: '32Mi' }, limits: { memory: '128Mi' } } })]);
    await createApp(ctl.ns, name, {
      replicas: 1,
      template: cpu('100m'),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceOnly' } },
    });
    const before = await settled(ctl.ns, name, undefined, 90_000);
    // More cpu than any node of this machine has: no other pod's exit can make room for it.
    await patchApp(ctl.ns, name, { template: cpu('64') });
    const held = await until(ctl.ns, name, (s) => s.app.status?.observedGeneration === 2 && fallback(s)?.reason === Reason.resizeRefused, {
      timeoutMs: 90_000,
      what: `App ${name} holds the pod whose resize is infeasible`,
    });
    const pod = held.pods[0] as Pod;
    expect(pod.metadata.uid).toBe(before.pods[0]?.metadata.uid);
    const pending = pod.status?.conditions?.find((c) => c.type === 'PodResizePending');
    expect(pending).toMatchObject({ status: 'True', reason: 'Infeasible' });
    expect(fallback(held)?.message).toContain(`infeasible on its node: ${pending?.message ?? ''}`);
    expect(held.app.status?.updatedReplicas).toBe(0);
    const events = await eventsOf(ctl.ns, name, EventReason.resizeRefused);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', action: 'Refuse' });
    expect(await eventsOf(ctl.ns, name, EventReason.successfulDelete)).toHaveLength(0);
    await deleteApp(ctl.ns, name);
  });
});
