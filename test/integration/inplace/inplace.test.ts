/**
 * The in-place protocol against the real apiserver and the simulated kubelet, driven step by step from the
 * test: the pod keeps its identity, the readiness gate goes False then True, grace periods hold the image back,
 * a tag moved to the same digest completes, template labels land with an image change, and a resources-only
 * change resizes with no restart.
 */
import { describe, expect, it } from 'vitest';
import { Annotation, Label, Reason } from '../../../src/api/keys.ts';
import { IN_PLACE_GATE } from '../../../src/workers/inplace/gate.ts';
import { readState } from '../../../src/workers/inplace/state.ts';
import type { InPlaceTarget } from '../../../src/workers/inplace/types.ts';
import { freshNamespace } from '../support.ts';
import { cond, createGatedPod, cs, driveInPlace, getPod, isReady } from './drive.ts';

const probe = { tcpSocket: { port: 80 } };

function target(plan: Partial<InPlaceTarget['plan']>, gracePeriodSeconds = 0): InPlaceTarget {
  return { revision: 'web-b', gracePeriodSeconds, plan: { images: [], metadata: { labels: {}, annotations: {} }, resources: [], ...plan } };
}

describe('in-place update on the sandbox', () => {
  it('changes the image in place: same name, UID, node and IP, restartCount +1, gate False then True, annotation gone', async () => {
    const ns = await freshNamespace('ip');
    const before = await createGatedPod(ns, 'web-0', {
      containers: [
        { name: 'app', image: 'nginx:1.25', readinessProbe: probe },
        { name: 'side', image: 'redis:7.2' },
      ],
    });
    expect(cond(before, IN_PLACE_GATE)).toMatchObject({ status: 'True', reason: Reason.podCreated });

    const run = await driveInPlace(ns, 'web-0', target({ images: [{ container: 'app', image: 'nginx:1.26' }] }));

    // The gate is released once the kubelet has observed the image patch, before the new container is ready.
    expect(run.writes.map((w) => w.kind)).toEqual(['start', 'patchSpec', 'gate', 'finish']);
    const after = await getPod(ns, 'web-0');
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.metadata.name).toBe('web-0');
    expect(after.spec.nodeName).toBe(before.spec.nodeName);
    expect(after.status?.podIP).toBe(before.status?.podIP);
    expect(cs(after, 'app')).toMatchObject({ image: 'nginx:1.26', restartCount: 1 });
    expect(cs(after, 'app')?.containerID).not.toBe(cs(before, 'app')?.containerID);
    expect(cs(after, 'side')).toEqual(cs(before, 'side'));
    expect(after.metadata.labels?.[Label.revision]).toBe('web-b');
    expect(after.metadata.annotations?.[Annotation.inPlaceUpdateState]).toBeUndefined();
    expect(cond(after, IN_PLACE_GATE)).toMatchObject({ status: 'True', reason: Reason.inPlaceUpdateDone });

    // While updating: gate False with StartInPlaceUpdate, and so the pod was not Ready.
    const updating = run.samples.filter((s) => cond(s.pod, IN_PLACE_GATE)?.status === 'False');
    expect(updating.length).toBeGreaterThan(0);
    expect(updating.every((s) => cond(s.pod, IN_PLACE_GATE)?.reason === Reason.startInPlaceUpdate)).toBe(true);
    expect(updating.some((s) => cond(s.pod, 'Ready')?.reason === 'ReadinessGatesNotReady')).toBe(true);
    expect(updating.every((s) => s.pod.metadata.annotations?.[Annotation.inPlaceUpdateState] !== undefined)).toBe(true);
    // Released early: True with InPlaceContainersRestarting only once the kubelet reported the patched spec, and
    // never Ready while released and app still ran its old instance.
    const released = run.samples.filter((s) => cond(s.pod, IN_PLACE_GATE)?.reason === Reason.inPlaceContainersRestarting);
    expect(released.length).toBeGreaterThan(0);
    for (const s of released) expect(s.pod.status?.observedGeneration ?? 0).toBeGreaterThanOrEqual(s.pod.metadata.generation ?? Infinity);
    const readyOnOld = released.filter((s) => isReady(s.pod) && cs(s.pod, 'app')?.restartCount === 0);
    expect(readyOnOld).toEqual([]);
    await expect.poll(async () => isReady(await getPod(ns, 'web-0'))).toBe(true);
  });

  it('keeps the gate False for the grace period before the image changes (a timer, not a busy loop)', async () => {
    const ns = await freshNamespace('ip');
    await createGatedPod(ns, 'web-0', { containers: [{ name: 'app', image: 'nginx:1.25' }] });

    const run = await driveInPlace(ns, 'web-0', target({ images: [{ container: 'app', image: 'nginx:1.26' }] }, 2));

    const start = run.writes.find((w) => w.kind === 'start')!;
    const patch = run.writes.find((w) => w.kind === 'patchSpec')!;
    // The image patch was sent no earlier than 2 s after the gate-False write was issued.
    expect(patch.sentAt - start.sentAt).toBeGreaterThanOrEqual(2000);
    // ...and on the apiserver the gate was False (second precision, rounded down) ≥ 2 s before it.
    const state = readState(run.samples.find((s) => s.step.kind === 'patchSpec')!.pod);
    expect(patch.sentAt - Date.parse(state!.startedAt)).toBeGreaterThanOrEqual(2000);
    const sawFalse = run.samples.filter((s) => s.at < patch.sentAt && cond(s.pod, IN_PLACE_GATE)?.status === 'False');
    expect(sawFalse.every((s) => s.pod.spec.containers[0]?.image === 'nginx:1.25')).toBe(true);
    // One grace-period timer was asked for, not a poll per tick.
    expect(run.samples.filter((s) => s.step.kind === 'wait')).toHaveLength(1);
    expect(cond(run.final, IN_PLACE_GATE)?.reason).toBe(Reason.inPlaceUpdateDone);
  });

  it('completes when the new reference resolves to the same digest (imageID unchanged)', async () => {
    const ns = await freshNamespace('ip');
    const before = await createGatedPod(ns, 'web-0', { containers: [{ name: 'app', image: 'nginx:1.25', readinessProbe: probe }] });
    const imageID = cs(before, 'app')!.imageID;
    const digest = imageID.slice(imageID.indexOf('@') + 1);

    const run = await driveInPlace(ns, 'web-0', target({ images: [{ container: 'app', image: `nginx:1.26@${digest}` }] }));

    const after = run.final;
    expect(cs(after, 'app')?.imageID).toBe(imageID);
    expect(cs(after, 'app')?.restartCount).toBe(1);
    expect(cond(after, IN_PLACE_GATE)).toMatchObject({ status: 'True', reason: Reason.inPlaceUpdateDone });
    expect(after.metadata.annotations?.[Annotation.inPlaceUpdateState]).toBeUndefined();
  });

  it('lands a template label edit together with an image edit without recreating the pod', async () => {
    const ns = await freshNamespace('ip');
    const before = await createGatedPod(
      ns,
      'web-0',
      { containers: [{ name: 'app', image: 'nginx:1.25' }] },
      { labels: { tier: 'front', old: 'x' }, annotations: { note: 'a' } },
    );

    const plan = { images: [{ container: 'app', image: 'nginx:1.26' }], metadata: { labels: { tier: 'back', old: null }, annotations: { note: 'b' } } };
    const run = await driveInPlace(ns, 'web-0', target(plan));

    const after = run.final;
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.metadata.labels).toEqual({ tier: 'back', [Label.revision]: 'web-b', [Label.controllerRevisionHash]: 'web-b' });
    // The template's annotations, and the restart baseline the analysis counts restarts from.
    const { [Annotation.restartBaseline]: baseline, ...annotations } = after.metadata.annotations ?? {};
    expect(annotations).toEqual({ note: 'b' });
    expect(JSON.parse(baseline ?? '{}')).toEqual({ revision: 'web-b', restarts: { app: 1 } });
    expect(cs(after, 'app')).toMatchObject({ image: 'nginx:1.26', restartCount: 1 });
  });

  it('resizes a resources-only change through pods/resize with no restart and the QoS class unchanged', async () => {
    const ns = await freshNamespace('ip');
    const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
    const bigger = { requests: { cpu: '150m', memory: '64Mi' }, limits: { cpu: '300m', memory: '128Mi' } };
    const before = await createGatedPod(ns, 'web-0', { containers: [{ name: 'app', image: 'nginx:1.25', resources }] });

    const run = await driveInPlace(ns, 'web-0', target({ resources: [{ container: 'app', resources: bigger }] }));

    expect(run.writes.map((w) => w.kind)).toEqual(['resize', 'patchSpec']);
    const after = run.final;
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.spec.containers[0]?.resources).toEqual(bigger);
    expect(after.status?.qosClass).toBe(before.status?.qosClass);
    expect(after.metadata.labels?.[Label.revision]).toBe('web-b');
    // No restart, and the gate never went False: the pod stayed in service.
    expect(run.samples.every((s) => cond(s.pod, IN_PLACE_GATE)?.status === 'True')).toBe(true);
    await expect.poll(async () => cs(await getPod(ns, 'web-0'), 'app')?.resources).toEqual(bigger);
    const now = await getPod(ns, 'web-0');
    expect(cs(now, 'app')).toMatchObject({ restartCount: 0, containerID: cs(before, 'app')?.containerID });
  });

  it('updates a multi-container pod in launch-priority batches, each after the previous one is ready', async () => {
    const ns = await freshNamespace('ip');
    const containers = [
      { name: 'app', image: 'nginx:1.25', readinessProbe: probe },
      { name: 'proxy', image: 'envoyproxy/envoy:v1.30', readinessProbe: probe },
    ];
    const before = await createGatedPod(ns, 'web-0', { containers }, { annotations: { 'apps.ebb.dev/container-priority': '{"proxy": 10}' } });

    const images = [
      { container: 'app', image: 'nginx:1.26' },
      { container: 'proxy', image: 'envoyproxy/envoy:v1.31' },
    ];
    const run = await driveInPlace(ns, 'web-0', target({ images }));

    const patches = run.writes.filter((w) => w.kind === 'patchSpec');
    expect(patches.map((w) => (w.step.kind === 'patchSpec' ? w.step.images.map((i) => i.container) : []))).toEqual([['proxy'], ['app']]);
    // When app's image was patched, proxy already ran its new image and was ready.
    const atSecond = run.samples.find((s) => s.step === patches[1]?.step)!.pod;
    expect(cs(atSecond, 'proxy')).toMatchObject({ image: 'envoyproxy/envoy:v1.31', ready: true, restartCount: 1 });
    expect(cs(atSecond, 'app')).toMatchObject({ image: 'nginx:1.25', restartCount: 0 });
    expect(run.final.metadata.uid).toBe(before.metadata.uid);
    expect(run.final.status?.containerStatuses?.map((c) => c.restartCount)).toEqual([1, 1]);
    expect(cond(run.final, IN_PLACE_GATE)?.reason).toBe(Reason.inPlaceUpdateDone);
  });

  it('keeps the state on the pod and the pod out of Ready while the new image cannot even be pulled', async () => {
    const ns = await freshNamespace('ip');
    await createGatedPod(ns, 'web-0', { containers: [{ name: 'app', image: 'nginx:1.25' }] });

    await expect(
      driveInPlace(ns, 'web-0', target({ images: [{ container: 'app', image: 'registry.example.invalid/app:2' }] }), { timeoutMs: 3_000 }),
    ).rejects.toThrow(/did not finish; last step .*waitRunning/);
    const pod = await getPod(ns, 'web-0');
    // The gate was released once the kubelet had the patch; the container that cannot start keeps the pod out
    // of Ready, and the update unfinished.
    expect(cond(pod, IN_PLACE_GATE)).toMatchObject({ status: 'True', reason: Reason.inPlaceContainersRestarting });
    expect(pod.metadata.annotations?.[Annotation.inPlaceUpdateState]).toBeDefined();
    expect(isReady(pod)).toBe(false);
    expect(cs(pod, 'app')?.state.waiting?.reason).toMatch(/ErrImagePull|ImagePullBackOff/);
  });
});
