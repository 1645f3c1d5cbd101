/**
 * The simulated kubelet against the real control plane: scheduling onto simulated nodes, pod status the way a
 * kubelet writes it, in-place image changes, readiness gates, PVC-backed pods, graceful deletion, pull
 * failures, in-place resize, and the node's CRI ImageService sharing its store with the kubelet.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../src/common/wait.ts';
import { CriClient, unixEndpoint } from '../../src/cri/client.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import { core } from '../../src/kube/paths.ts';
import { PatchType } from '../../src/kube/rest.ts';
import type { ContainerStatus, CoreEvent, Pod, PodCondition, Stored } from '../../src/kube/types.ts';
import { freshNamespace, sandbox } from './support.ts';

const IMAGE_ID = /^docker\.io\/library\/[a-z0-9-]+@sha256:[0-9a-f]{64}$/;
const CONTAINER_ID = /^containerd:\/\/[0-9a-f]{64}$/;

/** A core/v1 Event as the simulated kubelet writes it. */
type EventObject = CoreEvent & Required<Pick<CoreEvent, 'reason' | 'message'>>;

function cond(pod: Pod, type: string): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

function cs(pod: Pod, name: string): ContainerStatus {
  const s = pod.status?.containerStatuses?.find((c) => c.name === name);
  if (!s) throw new Error(`no status for container ${name}`);
  return s;
}

function isReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && cond(pod, 'Ready')?.status === 'True';
}

async function createPod(ns: string, name: string, spec: Record<string, unknown>): Promise<Stored<Pod>> {
  return sandbox().rest.create<Stored<Pod>>(core('pods', ns), { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
}

async function getPod(ns: string, name: string): Promise<Stored<Pod>> {
  return sandbox().rest.get<Stored<Pod>>(core('pods', ns, name));
}

async function waitPod(ns: string, name: string, what: string, check: (p: Stored<Pod>) => boolean, timeoutMs = 30_000): Promise<Stored<Pod>> {
  return waitFor(
    async () => {
      const p = await getPod(ns, name);
      return check(p) ? p : undefined;
    },
    { timeoutMs, intervalMs: 50, what: `pod ${ns}/${name} ${what}` },
  );
}

async function events(ns: string, uid: string): Promise<EventObject[]> {
  const list = await sandbox().rest.list<EventObject>(core('events', ns));
  return list.items.filter((e) => e.involvedObject.uid === uid);
}

async function waitEvent(ns: string, uid: string, reason: string, message: RegExp): Promise<EventObject> {
  return waitFor(async () => (await events(ns, uid)).find((e) => e.reason === reason && message.test(e.message)), {
    timeoutMs: 10_000,
    what: `event ${reason} ${String(message)}`,
  });
}

function patchPod(ns: string, name: string, patch: unknown, subresource?: string): Promise<Stored<Pod>> {
  return sandbox().rest.patch<Stored<Pod>>(core('pods', ns, name, subresource), patch, PatchType.strategic);
}

describe('simulated kubelet', () => {
  it('runs a pod the real scheduler placed on a simulated node, with a kubelet-like status', async () => {
    const ns = await freshNamespace('kl');
    // A tag no other test uses, so the node must pull it (other tests may already have put nginx:1.25 there).
    const image = `nginx:1.25-${randomBytes(3).toString('hex')}`;
    await createPod(ns, 'web', { containers: [{ name: 'app', image, readinessProbe: { tcpSocket: { port: 80 } } }] });
    const pod = await waitPod(ns, 'web', 'Running and Ready', isReady);

    expect(sandbox().nodeNames).toContain(pod.spec.nodeName);
    expect(pod.status?.podIP).toMatch(/^10\.\d+\.\d+\.\d+$/);
    expect(pod.status?.hostIP).toMatch(/^127\.0\.\d+\.\d+$/);
    expect(pod.status?.podIPs).toEqual([{ ip: pod.status?.podIP }]);
    expect(pod.status?.qosClass).toBe('BestEffort');
    expect(pod.status?.startTime).toBeTruthy();
    for (const type of ['PodScheduled', 'PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready']) {
      expect(cond(pod, type)?.status, type).toBe('True');
    }
    const app = cs(pod, 'app');
    expect(app).toMatchObject({ name: 'app', image, ready: true, started: true, restartCount: 0, lastState: {} });
    expect(app.imageID).toMatch(IMAGE_ID);
    expect(app.containerID).toMatch(CONTAINER_ID);
    expect(Date.parse(app.state.running?.startedAt ?? '')).not.toBeNaN();
    for (const reason of ['Pulling', 'Pulled', 'Created', 'Started']) {
      await waitEvent(ns, pod.metadata.uid, reason, /app|nginx/);
    }
  });

  it('restarts only the changed container when an image is patched in place', async () => {
    const ns = await freshNamespace('kl');
    await createPod(ns, 'db', {
      containers: [
        { name: 'app', image: 'nginx:1.25', readinessProbe: { tcpSocket: { port: 80 } } },
        { name: 'cache', image: 'redis:7.2' },
      ],
    });
    const before = await waitPod(ns, 'db', 'Ready', isReady);
    const oldApp = cs(before, 'app');
    const oldCache = cs(before, 'cache');

    await patchPod(ns, 'db', { spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] } });
    const after = await waitPod(ns, 'db', 'restarted and Ready', (p) => cs(p, 'app').restartCount === 1 && isReady(p));

    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.spec.nodeName).toBe(before.spec.nodeName);
    expect(after.status?.podIP).toBe(before.status?.podIP);
    const app = cs(after, 'app');
    expect(app.image).toBe('nginx:1.26');
    expect(app.imageID).toMatch(IMAGE_ID);
    expect(app.imageID).not.toBe(oldApp.imageID);
    expect(app.containerID).not.toBe(oldApp.containerID);
    expect(Date.parse(app.state.running?.startedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(oldApp.state.running?.startedAt ?? ''));
    expect(app.lastState.terminated).toMatchObject({ exitCode: 0, reason: 'Completed', containerID: oldApp.containerID });
    expect(cs(after, 'cache')).toEqual(oldCache);
    await waitEvent(ns, after.metadata.uid, 'Killing', /Container app definition changed, will be restarted/);
  });

  it('keeps Ready=False with ReadinessGatesNotReady until every readiness gate condition is True', async () => {
    const ns = await freshNamespace('kl');
    const gate = 'example.com/lb-registered';
    await createPod(ns, 'gated', { readinessGates: [{ conditionType: gate }], containers: [{ name: 'app', image: 'nginx:1.25' }] });
    const missing = await waitPod(ns, 'gated', 'containers ready', (p) => cond(p, 'ContainersReady')?.status === 'True');
    expect(cond(missing, 'Ready')).toMatchObject({ status: 'False', reason: 'ReadinessGatesNotReady' });
    expect(cond(missing, 'Ready')?.message).toBe(`corresponding condition of pod readiness gate "${gate}" does not exist.`);

    await patchPod(ns, 'gated', { status: { conditions: [{ type: gate, status: 'False' }] } }, 'status');
    const gatedFalse = await waitPod(ns, 'gated', 'gate reported False', (p) => /is not "True", but False/.test(cond(p, 'Ready')?.message ?? ''));
    expect(cond(gatedFalse, 'Ready')).toMatchObject({ status: 'False', reason: 'ReadinessGatesNotReady' });

    await patchPod(ns, 'gated', { status: { conditions: [{ type: gate, status: 'True' }] } }, 'status');
    const ready = await waitPod(ns, 'gated', 'Ready', isReady);
    expect(cond(ready, 'Ready')?.reason).toBeUndefined();
    expect(cond(ready, 'Ready')?.message).toBeUndefined();
    // The kubelet never touches a condition type it does not own.
    expect(cond(ready, gate)?.status).toBe('True');
  });

  it('runs a pod whose PVC the sandbox provisioner binds', async () => {
    const ns = await freshNamespace('kl');
    const { rest } = sandbox();
    await rest.create(core('persistentvolumeclaims', ns), {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await createPod(ns, 'stateful', {
      containers: [{ name: 'app', image: 'nginx:1.25', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    });
    const running = await waitPod(ns, 'stateful', 'Ready', isReady);
    const pvc = await rest.get<{
      metadata: { annotations: Record<string, string> };
      spec: { volumeName: string; storageClassName: string };
      status: { phase: string; capacity: Record<string, string> };
    }>(core('persistentvolumeclaims', ns, 'data'));
    expect(pvc.status.phase).toBe('Bound');
    expect(pvc.spec.storageClassName).toBe('standard');
    expect(pvc.status.capacity.storage).toBe('1Gi');
    // WaitForFirstConsumer: the scheduler picked the node first, and the volume is made for that node.
    expect(pvc.metadata.annotations['volume.kubernetes.io/selected-node']).toBe(running.spec.nodeName);
    const pv = await rest.get<{
      metadata: { annotations: Record<string, string> };
      spec: { hostPath: { path: string }; nodeAffinity: { required: { nodeSelectorTerms: { matchExpressions: { values: string[] }[] }[] } } };
    }>(core('persistentvolumes', undefined, pvc.spec.volumeName));
    expect(pv.spec.nodeAffinity.required.nodeSelectorTerms[0]?.matchExpressions[0]?.values).toEqual([running.spec.nodeName]);
    expect(pv.metadata.annotations['pv.kubernetes.io/provisioned-by']).toBe('sandbox.ebb.dev/hostpath');
    expect(pv.spec.hostPath.path).toBe(join(sandbox().dir, 'volumes', pvc.spec.volumeName));
  });

  it('deletes the volume of a deleted claim (reclaim policy Delete)', async () => {
    const ns = await freshNamespace('kl');
    const { rest } = sandbox();
    await rest.create(core('persistentvolumeclaims', ns), {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'scratch' },
      // No pod uses it: only the Immediate class binds it (the default one waits for a consumer).
      spec: { storageClassName: 'standard-immediate', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } },
    });
    const bound = await waitFor(
      async () => {
        const c = await rest.get<{ spec: { volumeName?: string }; status?: { phase?: string } }>(core('persistentvolumeclaims', ns, 'scratch'));
        return c.status?.phase === 'Bound' ? c.spec.volumeName : undefined;
      },
      { timeoutMs: 30_000, what: 'claim scratch Bound' },
    );
    await rest.delete(core('persistentvolumeclaims', ns, 'scratch'));
    const gone = (ref: ReturnType<typeof core>) => async (): Promise<true | undefined> => {
      try {
        await rest.get(ref);
        return undefined;
      } catch (err) {
        return isKubeError(err, 'NotFound') ? true : undefined;
      }
    };
    // The claim carries the kubernetes.io/pvc-protection finalizer: its removal needs kube-controller-manager's
    // persistentvolumeclaim-protection-controller (and the volume's, persistentvolume-protection-controller).
    await waitFor(gone(core('persistentvolumeclaims', ns, 'scratch')), { timeoutMs: 10_000, what: 'claim scratch removed (pvc-protection controller)' });
    await waitFor(gone(core('persistentvolumes', undefined, bound)), { timeoutMs: 20_000, what: `volume ${bound} deleted` });
  });

  it('honours graceful deletion: stops the containers, then deletes the pod with grace 0', async () => {
    const ns = await freshNamespace('kl');
    const created = await createPod(ns, 'bye', { terminationGracePeriodSeconds: 30, containers: [{ name: 'app', image: 'nginx:1.25' }] });
    await waitPod(ns, 'bye', 'Ready', isReady);
    await sandbox().rest.delete(core('pods', ns, 'bye'));
    await waitFor(
      async () => {
        try {
          const p = await getPod(ns, 'bye');
          return p.metadata.uid === created.metadata.uid ? undefined : true;
        } catch (err) {
          return isKubeError(err, 'NotFound') ? true : undefined;
        }
      },
      { timeoutMs: 20_000, what: 'pod bye gone' },
    );
    await waitEvent(ns, created.metadata.uid, 'Killing', /Stopping container app/);
  });

  it('reports ErrImagePull, then ImagePullBackOff, for an image that cannot be pulled', async () => {
    const ns = await freshNamespace('kl');
    const image = 'registry.invalid/team/app:1.0';
    const created = await createPod(ns, 'nopull', { containers: [{ name: 'app', image }] });
    const seen = new Set<string>();
    await waitFor(
      async () => {
        const p = await getPod(ns, 'nopull');
        const waiting = p.status?.containerStatuses?.[0]?.state.waiting;
        if (waiting?.reason) seen.add(waiting.reason);
        if (waiting?.reason === 'ErrImagePull') expect(waiting.message).toMatch(/failed to pull and unpack image/);
        if (waiting?.reason === 'ImagePullBackOff') expect(waiting.message).toContain(`Back-off pulling image "${image}"`);
        return seen.has('ErrImagePull') && seen.has('ImagePullBackOff') ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 25, what: 'ErrImagePull and ImagePullBackOff' },
    );
    const pod = await getPod(ns, 'nopull');
    expect(pod.status?.phase).toBe('Pending');
    expect(cond(pod, 'Ready')?.status).toBe('False');
    await waitEvent(ns, created.metadata.uid, 'Failed', /Failed to pull image/);
    await waitEvent(ns, created.metadata.uid, 'BackOff', /Back-off pulling image/);
  });

  it('shows a crash loop: CrashLoopBackOff, a growing restartCount and the last termination', async () => {
    const ns = await freshNamespace('kl');
    await createPod(ns, 'crasher', { containers: [{ name: 'app', image: 'example.com/crashloop-app:1' }] });
    const pod = await waitPod(ns, 'crasher', 'crash-looping', (p) => {
      const s = p.status?.containerStatuses?.[0];
      return s !== undefined && s.restartCount >= 2 && s.state.waiting?.reason === 'CrashLoopBackOff';
    });
    const s = cs(pod, 'app');
    expect(s.lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(s.state.waiting?.message).toMatch(/^back-off \S+ restarting failed container=app pod=crasher_/);
    expect(pod.status?.phase).toBe('Running');
    expect(cond(pod, 'Ready')?.status).toBe('False');
  });

  it('resizes a running container in place through pods/resize, restarting only when the policy asks', async () => {
    const ns = await freshNamespace('kl');
    const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
    await createPod(ns, 'sized', {
      containers: [
        { name: 'app', image: 'nginx:1.25', resources },
        { name: 'jvm', image: 'eclipse-temurin:21', resources, resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] },
      ],
    });
    const before = await waitPod(ns, 'sized', 'Ready', isReady);
    expect(cs(before, 'app').allocatedResources).toEqual({ cpu: '100m', memory: '64Mi' });

    await patchPod(
      ns,
      'sized',
      {
        spec: {
          containers: [
            { name: 'app', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m' } } },
            { name: 'jvm', resources: { requests: { memory: '96Mi' }, limits: { memory: '192Mi' } } },
          ],
        },
      },
      'resize',
    );
    const after = await waitPod(
      ns,
      'sized',
      'resized',
      (p) => cs(p, 'app').resources?.requests?.cpu === '150m' && cs(p, 'jvm').resources?.limits?.memory === '192Mi' && isReady(p),
    );
    expect(cs(after, 'app')).toMatchObject({
      restartCount: 0,
      containerID: cs(before, 'app').containerID,
      allocatedResources: { cpu: '150m', memory: '64Mi' },
    });
    expect(cs(after, 'jvm').restartCount).toBe(1);
    expect(cond(after, 'PodResizeInProgress')).toBeUndefined();
    expect(cond(after, 'PodResizePending')).toBeUndefined();
  });

  it('starts a pod without pulling an image pre-pulled through the node CRI ImageService', async () => {
    const ns = await freshNamespace('kl');
    const node = sandbox().nodeNames[0]!;
    const image = `example.com/prewarm/app:${Date.now()}`;
    const client = CriClient.connect(unixEndpoint(join(sandbox().dir, 'nodes', node, 'cri.sock')));
    const signal = AbortSignal.timeout(30_000);
    try {
      expect(await client.imageStatus(image, { signal })).toBeUndefined();
      const ref = await client.pullImage(image, { signal });
      const stored = await client.imageStatus(image, { signal });
      expect(stored?.id).toBe(ref);
      expect(await client.pullImage(image, { signal })).toBe(ref);
    } finally {
      client.close();
    }
    const created = await createPod(ns, 'warm', {
      nodeSelector: { 'kubernetes.io/hostname': node },
      containers: [{ name: 'app', image, imagePullPolicy: 'IfNotPresent' }],
    });
    const pod = await waitPod(ns, 'warm', 'Ready', isReady);
    expect(pod.spec.nodeName).toBe(node);
    await waitEvent(ns, created.metadata.uid, 'Pulled', /already present on machine/);
    expect((await events(ns, created.metadata.uid)).some((e) => e.reason === 'Pulling')).toBe(false);
  });
});
