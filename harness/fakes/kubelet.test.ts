import { describe, expect, it } from 'vitest';
import { core } from '../../src/kube/paths.ts';
import { PatchType } from '../../src/kube/rest.ts';
import type { Pod, Stored } from '../../src/kube/types.ts';
import { Clock } from './clock.ts';
import { FakeCluster } from './cluster.ts';
import { FakeKubelet, type KubeletOptions } from './kubelet.ts';

interface Status {
  phase?: string;
  conditions?: { type: string; status: string; reason?: string }[];
  containerStatuses?: { restartCount: number; ready: boolean; imageID: string; containerID?: string; resources?: unknown }[];
}

function setup(opts: Partial<KubeletOptions> = {}) {
  const clock = new Clock();
  const cluster = new FakeCluster(clock.now);
  const kubelet = new FakeKubelet(cluster, clock, opts);
  const client = cluster.client();
  const pod = (): Stored<Pod> => cluster.pods.get('ns/web-0')!;
  const status = (): Status => pod().status as Status;
  const container = () => status().containerStatuses?.[0];
  const condition = (type: string) => status().conditions?.find((c) => c.type === type);
  return { clock, cluster, kubelet, client, pod, status, container, condition };
}

const spec = (image: string, extra: Record<string, unknown> = {}) => ({
  containers: [{ name: 'app', image, ...extra }],
  readinessGates: [{ conditionType: 'example.com/gate' }],
});
const newPod = (image: string, extra: Record<string, unknown> = {}): Pod => ({ metadata: { name: 'web-0', namespace: 'ns' }, spec: spec(image, extra) });

describe('fake kubelet', () => {
  it('starts a pod startTicks ticks after its creation, ready at once, and Ready once its gates are True', async () => {
    const t = setup({ startTicks: 2 });
    await t.client.pods.create('ns', newPod('registry.example/web:v1'));
    t.kubelet.tick();
    expect(t.status().phase).toBe('Pending');
    t.kubelet.tick();
    expect(t.status().phase).toBe('Running');
    expect(t.container()).toMatchObject({ restartCount: 0, ready: true });
    expect(t.condition('ContainersReady')?.status).toBe('True');
    expect(t.condition('Ready')).toMatchObject({ status: 'False', reason: 'ReadinessGatesNotReady' });
    const rv = t.pod().metadata.resourceVersion;
    t.kubelet.tick();
    expect(t.pod().metadata.resourceVersion).toBe(rv);
    const gate = { status: { conditions: [{ type: 'example.com/gate', status: 'True' }] } };
    await t.client.podPatches.patch(core('pods', 'ns', 'web-0', 'status'), gate, PatchType.strategic);
    t.kubelet.sync();
    expect(t.condition('Ready')?.status).toBe('True');
  });

  it('restarts a container whose image changed; it is ready restartTicks later; a moved tag keeps the imageID', async () => {
    const t = setup({ startTicks: 1, restartTicks: 2, aliases: { 'registry.example/web:v2': 'registry.example/web:v1' } });
    await t.client.pods.create('ns', newPod('registry.example/web:v1'));
    t.kubelet.tick();
    const before = t.container()!;
    t.cluster.pods.set('ns/web-0', { ...t.pod(), spec: spec('registry.example/web:v2') });
    t.kubelet.tick();
    expect(t.container()).toMatchObject({ restartCount: 1, ready: false, imageID: before.imageID });
    expect(t.container()?.containerID).not.toBe(before.containerID);
    t.kubelet.tick();
    expect(t.container()?.ready).toBe(false);
    t.kubelet.tick();
    expect(t.container()?.ready).toBe(true);
  });

  it('actuates a resize without a restart', async () => {
    const t = setup({ startTicks: 1 });
    const small = { requests: { cpu: '100m' }, limits: { cpu: '200m' } };
    const big = { requests: { cpu: '200m' }, limits: { cpu: '400m' } };
    await t.client.pods.create('ns', newPod('web:v1', { resources: small }));
    t.kubelet.tick();
    t.cluster.pods.set('ns/web-0', { ...t.pod(), spec: spec('web:v1', { resources: big }) });
    t.kubelet.sync();
    expect(t.container()).toMatchObject({ restartCount: 0, ready: true, resources: big });
  });

  it('refuses a memory-limit decrease after an in-place restart as the real kubelet does; a fresh container takes it', async () => {
    const big = { requests: { memory: '64Mi' }, limits: { memory: '128Mi' } };
    const small = { requests: { memory: '32Mi' }, limits: { memory: '64Mi' } };
    const restarted = setup({ startTicks: 1 });
    await restarted.client.pods.create('ns', newPod('web:v1', { resources: big }));
    restarted.kubelet.tick();
    restarted.cluster.pods.set('ns/web-0', { ...restarted.pod(), spec: spec('web:v2', { resources: big }) });
    restarted.kubelet.tick();
    restarted.kubelet.tick();
    expect(restarted.container()).toMatchObject({ restartCount: 1, ready: true });
    restarted.cluster.pods.set('ns/web-0', { ...restarted.pod(), spec: spec('web:v2', { resources: small }) });
    restarted.kubelet.tick();
    restarted.kubelet.tick();
    expect(restarted.condition('PodResizeInProgress')).toMatchObject({
      status: 'True',
      reason: 'Error',
      message: 'cannot decrease memory limits: missing container "app" memory usage',
    });
    expect(restarted.container()).toMatchObject({ restartCount: 1, resources: big });

    const fresh = setup({ startTicks: 1 });
    await fresh.client.pods.create('ns', newPod('web:v1', { resources: big }));
    fresh.kubelet.tick();
    fresh.cluster.pods.set('ns/web-0', { ...fresh.pod(), spec: spec('web:v1', { resources: small }) });
    fresh.kubelet.sync();
    expect(fresh.container()).toMatchObject({ restartCount: 0, resources: small });
    expect(fresh.condition('PodResizeInProgress')).toBeUndefined();
  });

  it('never reports a crash-looping image ready', async () => {
    const t = setup({ startTicks: 1 });
    await t.client.pods.create('ns', newPod('registry.example/crashloop-app:v1'));
    for (let i = 0; i < 5; i++) t.kubelet.tick();
    expect(t.container()?.ready).toBe(false);
  });

  it('removes a deleted pod terminateTicks ticks later, and fails a pod for good', async () => {
    const t = setup({ startTicks: 1, terminateTicks: 2 });
    await t.client.pods.create('ns', newPod('web:v1'));
    t.kubelet.tick();
    await t.client.pods.delete('ns', 'web-0', undefined);
    t.kubelet.tick();
    expect(t.cluster.pods.has('ns/web-0')).toBe(true);
    t.kubelet.tick();
    expect(t.cluster.pods.has('ns/web-0')).toBe(false);

    await t.client.pods.create('ns', newPod('web:v1'));
    t.kubelet.tick();
    t.kubelet.fail('ns', 'web-0');
    t.kubelet.tick();
    expect(t.status().phase).toBe('Failed');
    expect(t.condition('Ready')?.status).toBe('False');
  });
});
