/**
 * The in-place protocol end to end against a fake API and a fake kubelet: one container, grace period, a tag
 * moved to the same digest, launch priorities, a container that never becomes ready, and the changes that
 * restart nothing (labels, resizes).
 */
import { describe, expect, it } from 'vitest';
import { Annotation, Label, Reason } from '../../../src/api/keys.ts';
import { drive, env, gate, image, newPod, status, target } from './scenario.ts';

const B = target('web-b', { images: [{ container: 'app', image: 'nginx:1.26' }], metadata: { labels: { tier: 'back' }, annotations: {} } });

describe('in-place update protocol', () => {
  it('updates one container: gate False, image patched, gate True once the kubelet has it, annotation gone — in 4 writes', async () => {
    const e = env(newPod([{ name: 'app', image: 'nginx:1.25' }]));
    const before = status(e.api.read(), 'app')!;
    const run = await drive(e, B);

    expect(run.writes.map((s) => s.kind)).toEqual(['start', 'patchSpec', 'gate', 'finish']);
    expect(e.api.writes).toHaveLength(4);
    const pod = e.api.read();
    expect(image(pod, 'app')).toBe('nginx:1.26');
    expect(pod.metadata.labels).toMatchObject({ [Label.revision]: 'web-b', tier: 'back', [Label.app]: 'web' });
    expect(pod.metadata.annotations?.[Annotation.inPlaceUpdateState]).toBeUndefined();
    expect(gate(pod)).toMatchObject({ status: 'True', reason: Reason.inPlaceUpdateDone });
    expect(status(pod, 'app')).toMatchObject({ restartCount: 1, ready: true });
    expect(status(pod, 'app')?.containerID).not.toBe(before.containerID);
    // The gate went False before the image changed, and came back True only after the image patch (released
    // early: the kubelet had observed it), the annotation staying until the new container was ready.
    const patched = run.timeline.findIndex((s) => s.images.app === 'nginx:1.26');
    expect(run.timeline[patched - 1]?.gate).toBe('False');
    const released = run.timeline.findIndex((s, i) => i > 0 && s.gate === 'True');
    expect(released).toBeGreaterThan(patched);
    expect(run.timeline.slice(1, patched).every((s) => s.gate === 'False')).toBe(true);
    expect(run.timeline[released]?.annotated).toBe(true);
    expect(run.writes.find((s) => s.kind === 'gate')).toMatchObject({ condition: { status: 'True', reason: Reason.inPlaceContainersRestarting } });
  });

  it('waits out the grace period as a timer before patching the image', async () => {
    const e = env(newPod([{ name: 'app', image: 'nginx:1.25' }]));
    const run = await drive(e, { ...B, gracePeriodSeconds: 5 }, { tickMs: 60_000 });

    const startedAt = run.timeline.find((s) => s.gate === 'False')!.atMs;
    const patchedAt = run.timeline.find((s) => s.images.app === 'nginx:1.26')!.atMs;
    expect(patchedAt - startedAt).toBeGreaterThanOrEqual(5000);
    const waits = run.steps.filter((s) => s.kind === 'wait');
    // One timer for the remaining grace period, not a polling loop.
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ reason: 'InPlaceGracePeriod' });
    expect(run.writes.map((s) => s.kind)).toEqual(['start', 'patchSpec', 'gate', 'finish']);
  });

  it('completes when the new tag resolves to the same digest (same imageID, container restarted)', async () => {
    const e = env(newPod([{ name: 'app', image: 'nginx:1.25' }]), { aliases: { 'nginx:1.26': 'nginx:1.25' } });
    const oldImageID = status(e.api.read(), 'app')?.imageID;
    const run = await drive(e, B);

    const pod = e.api.read();
    expect(status(pod, 'app')?.imageID).toBe(oldImageID);
    expect(status(pod, 'app')?.restartCount).toBe(1);
    expect(run.steps.at(-1)?.kind).toBe('done');
    expect(gate(pod)?.status).toBe('True');
  });

  it('updates containers in batches by launch priority, highest first, each after the previous is ready', async () => {
    const priorities = JSON.stringify({ proxy: 100, log: -5 });
    const containers = [
      { name: 'app', image: 'app:1' },
      { name: 'log', image: 'log:1' },
      { name: 'proxy', image: 'proxy:1' },
    ];
    const e = env(newPod(containers, { 'apps.ebb.dev/container-priority': priorities }));
    const plan = { images: ['app', 'log', 'proxy'].map((c) => ({ container: c, image: `${c}:2` })) };
    const order: string[][] = [];
    const run = await drive(e, target('web-b', plan), {
      beforeApply: (_i, pod, step) => {
        if (step.kind !== 'patchSpec') return undefined;
        // Every container patched earlier runs its new image and is ready.
        for (const c of order.flat()) expect(status(pod, c)).toMatchObject({ image: `${c}:2`, ready: true });
        order.push(step.images.map((i) => i.container));
        return undefined;
      },
    });

    expect(order).toEqual([['proxy'], ['app'], ['log']]);
    // The gate is released only once the last batch is patched and the earlier ones are done.
    expect(run.writes.map((s) => s.kind)).toEqual(['start', 'patchSpec', 'patchSpec', 'patchSpec', 'gate', 'finish']);
    // Only the last batch moves the revision label.
    const labels = run.writes.filter((s) => s.kind === 'patchSpec').map((s) => (s.kind === 'patchSpec' ? s.revisionLabel : ''));
    expect(labels).toEqual([undefined, undefined, 'web-b']);
    expect(e.api.read().status?.containerStatuses?.map((s) => s.restartCount)).toEqual([1, 1, 1]);
  });

  it('never finishes while the new container does not become ready', async () => {
    const e = env(newPod([{ name: 'app', image: 'nginx:1.25' }]));
    const run = await drive(e, target('web-b', { images: [{ container: 'app', image: 'crashloop:1' }] }), { maxIterations: 200 });

    expect(run.steps.some((s) => s.kind === 'finish' || s.kind === 'done')).toBe(false);
    expect(run.steps.at(-1)).toMatchObject({ kind: 'waitRunning', reason: 'ContainerNotReady', container: 'app' });
    const pod = e.api.read();
    // The gate was released once the kubelet had the patch; the container's readiness keeps the pod out of
    // Ready, and the update stays unfinished (annotated).
    expect(gate(pod)).toMatchObject({ status: 'True', reason: Reason.inPlaceContainersRestarting });
    expect(status(pod, 'app')?.ready).toBe(false);
    expect(pod.metadata.annotations?.[Annotation.inPlaceUpdateState]).toBeDefined();
  });

  it('patches a label-only change in one write without touching the gate', async () => {
    const e = env(newPod([{ name: 'app', image: 'nginx:1.25' }]));
    const run = await drive(e, target('web-b', { metadata: { labels: { tier: null, canary: 'yes' }, annotations: { 'example.com/x': 'y' } } }));

    expect(run.writes.map((s) => s.kind)).toEqual(['patchSpec']);
    const pod = e.api.read();
    expect(pod.metadata.labels).toEqual({ [Label.revision]: 'web-b', [Label.controllerRevisionHash]: 'web-b', [Label.app]: 'web', canary: 'yes' });
    expect(pod.metadata.annotations).toEqual({
      'example.com/x': 'y',
      [Annotation.restartBaseline]: JSON.stringify({ revision: 'web-b', restarts: { app: 0 } }),
    });
    expect(run.timeline.every((s) => s.gate === 'True')).toBe(true);
  });

  it('resizes without a restart and without the gate when no resizePolicy restarts', async () => {
    const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
    const bigger = { requests: { cpu: '150m', memory: '64Mi' }, limits: { cpu: '300m', memory: '128Mi' } };
    const e = env(newPod([{ name: 'app', image: 'nginx:1.25', resources }]));
    const run = await drive(e, target('web-b', { resources: [{ container: 'app', resources: bigger }] }));

    expect(run.writes.map((s) => s.kind)).toEqual(['resize', 'patchSpec']);
    expect(e.api.writes[0]?.subresource).toBe('resize');
    const pod = e.api.read();
    expect(pod.spec?.containers?.[0]?.resources).toEqual(bigger);
    expect(status(pod, 'app')).toMatchObject({ restartCount: 0, resources: bigger });
    expect(run.timeline.every((s) => s.gate === 'True')).toBe(true);
  });

  it('takes the gated path for a resize the resizePolicy restarts for, and waits for it to be actuated', async () => {
    const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
    const more = { requests: { cpu: '100m', memory: '96Mi' }, limits: { cpu: '200m', memory: '192Mi' } };
    const resizePolicy = [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }];
    const e = env(newPod([{ name: 'jvm', image: 'temurin:21', resources, resizePolicy }]));
    const run = await drive(e, target('web-b', { resources: [{ container: 'jvm', resources: more }] }));

    expect(run.writes.map((s) => s.kind)).toEqual(['start', 'resize', 'patchSpec', 'finish']);
    expect(gate(e.api.read())?.reason).toBe(Reason.inPlaceUpdateDone);
  });
});
