import { describe, expect, it } from 'vitest';
import type { Pod, PodCondition } from '../../../src/kube/types.ts';
import { buildPodStatus, type KubeletPodStatus } from './pod-status.ts';
import { newPodRuntime, withAllStopped, withContainerExited, withPullFailed, withResizeAllocated, withResizePending, type PodRuntime } from './runtime.ts';
import { readyRuntime, started, T0, testPod, timings } from './test-fixtures.ts';

const app = { name: 'app', image: 'nginx:1.25' };
const probed = { ...app, readinessProbe: { tcpSocket: { port: 80 } } };
const init = { name: 'migrate', image: 'busybox:1.36' };

function build(pod: Pod, runtime: PodRuntime, now = T0 + 5_000, previous?: PodCondition[]): KubeletPodStatus {
  return buildPodStatus({ pod, runtime, now, hostIP: '127.0.1.1', timings, previous });
}

function cond(s: KubeletPodStatus, type: string): PodCondition | undefined {
  return s.conditions.find((c) => c.type === type);
}

function summary(s: KubeletPodStatus): string {
  const conds = ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'].map((t) => `${t}=${cond(s, t)?.status ?? '-'}`);
  const waiting = s.containerStatuses.map((c) => c.state.waiting?.reason ?? Object.keys(c.state)[0]).join(',');
  return `${s.phase} ${conds.join(' ')} ${waiting}`;
}

describe('buildPodStatus', () => {
  it.each<[string, Pod, () => PodRuntime, number, string]>([
    [
      'a pod the kubelet just saw',
      testPod(),
      () => newPodRuntime('uid-1', T0),
      T0,
      'Pending PodReadyToStartContainers=False Initialized=True ContainersReady=False Ready=False ContainerCreating',
    ],
    [
      'a sandbox without containers yet',
      testPod(),
      () => readyRuntime(),
      T0,
      'Pending PodReadyToStartContainers=True Initialized=True ContainersReady=False Ready=False ContainerCreating',
    ],
    [
      'init containers pending',
      testPod({ initContainers: [init] }),
      () => readyRuntime(),
      T0,
      'Pending PodReadyToStartContainers=True Initialized=False ContainersReady=False Ready=False PodInitializing',
    ],
    [
      'a running container without probes',
      testPod(),
      () => started(readyRuntime(), app, T0),
      T0,
      'Running PodReadyToStartContainers=True Initialized=True ContainersReady=True Ready=True running',
    ],
    [
      'a running container before its readiness probe passes',
      testPod({ containers: [probed] }),
      () => started(readyRuntime(), probed, T0, { readinessMs: 500 }),
      T0 + 499,
      'Running PodReadyToStartContainers=True Initialized=True ContainersReady=False Ready=False running',
    ],
    [
      'a running container after its readiness probe passes',
      testPod({ containers: [probed] }),
      () => started(readyRuntime(), probed, T0, { readinessMs: 500 }),
      T0 + 500,
      'Running PodReadyToStartContainers=True Initialized=True ContainersReady=True Ready=True running',
    ],
    [
      'containers stopped for deletion',
      testPod(),
      () => withAllStopped(started(readyRuntime(), app, T0), T0 + 1_000),
      T0 + 1_000,
      'Succeeded PodReadyToStartContainers=False Initialized=True ContainersReady=False Ready=False terminated',
    ],
    [
      'a failed container with restartPolicy Never',
      testPod({ restartPolicy: 'Never' }),
      () => withContainerExited(started(readyRuntime(), app, T0), 'app', { exitCode: 1, reason: 'Error', now: T0 + 100, crashed: true }),
      T0 + 200,
      'Failed PodReadyToStartContainers=True Initialized=True ContainersReady=False Ready=False terminated',
    ],
  ])('%s', (_name, pod, rt, now, want) => {
    expect(summary(build(pod, rt(), now))).toBe(want);
  });

  it('reports a running container like a kubelet does', () => {
    const s = build(testPod(), started(readyRuntime(), app, T0 + 1_200));
    expect(s.containerStatuses).toEqual([
      {
        name: 'app',
        image: 'nginx:1.25',
        imageID: `docker.io/library/nginx@sha256:${'a'.repeat(64)}`,
        containerID: `containerd://${'app'.padEnd(64, '0')}`,
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: '2025-01-01T00:00:01Z' } },
        lastState: {},
      },
    ]);
    expect(s).toMatchObject({
      hostIP: '127.0.1.1',
      hostIPs: [{ ip: '127.0.1.1' }],
      podIP: '10.244.0.2',
      podIPs: [{ ip: '10.244.0.2' }],
      observedGeneration: 1,
    });
    expect(s.startTime).toBe('2025-01-01T00:00:00Z');
  });

  it('orders container statuses by name and init container statuses by spec', () => {
    const pod = testPod({
      containers: [
        { name: 'zeta', image: 'a:1' },
        { name: 'alpha', image: 'b:1' },
      ],
      initContainers: [
        { name: 'z-init', image: 'c:1' },
        { name: 'a-init', image: 'd:1' },
      ],
    });
    const s = build(pod, readyRuntime());
    expect(s.containerStatuses.map((c) => c.name)).toEqual(['alpha', 'zeta']);
    expect(s.initContainerStatuses?.map((c) => c.name)).toEqual(['z-init', 'a-init']);
  });

  it.each<[string, PodCondition[], { status: string; reason?: string; message?: string }]>([
    [
      'no gate condition',
      [],
      { status: 'False', reason: 'ReadinessGatesNotReady', message: 'corresponding condition of pod readiness gate "example.com/ready" does not exist.' },
    ],
    [
      'a gate condition that is False',
      [{ type: 'example.com/ready', status: 'False' }],
      { status: 'False', reason: 'ReadinessGatesNotReady', message: 'the status of pod readiness gate "example.com/ready" is not "True", but False' },
    ],
    ['a gate condition that is True', [{ type: 'example.com/ready', status: 'True' }], { status: 'True' }],
  ])('Ready with a readiness gate and %s', (_name, extra, want) => {
    const pod = testPod({ readinessGates: [{ conditionType: 'example.com/ready' }] });
    pod.status = { ...pod.status, conditions: [...(pod.status?.conditions ?? []), ...extra] };
    const ready = cond(build(pod, started(readyRuntime(), app, T0)), 'Ready');
    expect({ status: ready?.status, reason: ready?.reason, message: ready?.message }).toEqual({ reason: undefined, message: undefined, ...want });
    expect(cond(build(pod, started(readyRuntime(), app, T0)), 'ContainersReady')?.status).toBe('True');
  });

  it('never emits a condition type the kubelet does not own', () => {
    const pod = testPod({ readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] });
    pod.status = { ...pod.status, conditions: [...(pod.status?.conditions ?? []), { type: 'InPlaceUpdateReady', status: 'False' }] };
    const types = build(pod, started(readyRuntime(), app, T0)).conditions.map((c) => c.type);
    expect(types).toEqual(['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady']);
  });

  it('names the unready containers as the kubelet does', () => {
    const pod = testPod({ containers: [probed, { ...probed, name: 'side' }] });
    const rt = started(started(readyRuntime(), probed, T0, { readinessMs: 500 }), { ...probed, name: 'side' }, T0, { readinessMs: 500 });
    expect(cond(build(pod, rt, T0 + 100), 'ContainersReady')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [app side]',
    });
  });

  it.each<[string, number, string, RegExp]>([
    ['right after the failure', 100, 'ErrImagePull', /^rpc error: .*not found$/],
    ['in the second half of the back-off', 700, 'ImagePullBackOff', /^Back-off pulling image "registry\.invalid\/app:1": ErrImagePull: rpc error/],
  ])('a failed pull shows %s as %s', (_name, after, reason, message) => {
    const c = { name: 'app', image: 'registry.invalid/app:1' };
    const rt = withPullFailed(
      readyRuntime(),
      'app',
      { image: c.image, reason: 'ErrImagePull', message: 'rpc error: code = Unknown desc = not found', at: T0 },
      {},
    );
    const s = build(testPod({ containers: [c] }), rt, T0 + after);
    expect(s.containerStatuses[0]?.state.waiting?.reason).toBe(reason);
    expect(s.containerStatuses[0]?.state.waiting?.message).toMatch(message);
    expect(s.containerStatuses[0]).toMatchObject({ image: c.image, imageID: '', ready: false, restartCount: 0 });
    expect(s.phase).toBe('Pending');
  });

  it('shows a crash loop: CrashLoopBackOff with the last termination and the back-off in the message', () => {
    let rt = started(readyRuntime(), app, T0);
    rt = withContainerExited(rt, 'app', { exitCode: 1, reason: 'Error', now: T0 + 200, crashed: true });
    rt = started(rt, app, T0 + 200, { id: 'second' });
    rt = withContainerExited(rt, 'app', { exitCode: 1, reason: 'Error', now: T0 + 400, crashed: true });
    const s = build(testPod(), rt, T0 + 500);
    const c = s.containerStatuses[0];
    expect(c?.restartCount).toBe(1);
    expect(c?.state.waiting).toEqual({ reason: 'CrashLoopBackOff', message: 'back-off 1s restarting failed container=app pod=web-0_ns(uid-1)' });
    expect(c?.lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error', containerID: `containerd://${'second'.padEnd(64, '0')}` });
    expect(s.phase).toBe('Running');
  });

  it('reports an in-place restart: lastState is the replaced instance', () => {
    let rt = started(readyRuntime(), app, T0);
    rt = withContainerExited(rt, 'app', { exitCode: 0, reason: 'Completed', now: T0 + 3_000, crashed: false });
    rt = started(rt, { ...app, image: 'nginx:1.26' }, T0 + 3_100, { id: 'new' });
    const c = build(testPod({ containers: [{ ...app, image: 'nginx:1.26' }] }), rt, T0 + 4_000).containerStatuses[0];
    expect(c).toMatchObject({ image: 'nginx:1.26', restartCount: 1, ready: true, state: { running: { startedAt: '2025-01-01T00:00:03Z' } } });
    expect(c?.lastState.terminated).toMatchObject({ exitCode: 0, reason: 'Completed', finishedAt: '2025-01-01T00:00:03Z' });
  });

  it('keeps lastTransitionTime while a condition keeps its status', () => {
    const rt = started(readyRuntime(), app, T0);
    const first = build(testPod(), rt, T0 + 1_000);
    const later = build(testPod(), rt, T0 + 9_000, first.conditions);
    expect(cond(later, 'Ready')?.lastTransitionTime).toBe('2025-01-01T00:00:01Z');
  });

  it('reports resize progress with allocated and actual resources', () => {
    const sized = { ...app, resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } };
    const resized = { requests: { cpu: '150m' }, limits: { cpu: '300m' } };
    const rt = withResizeAllocated(started(readyRuntime(), sized, T0), 'app', resized);
    const s = build(testPod({ containers: [{ ...sized, resources: resized }] }), rt);
    expect(cond(s, 'PodResizeInProgress')?.status).toBe('True');
    expect(s.containerStatuses[0]).toMatchObject({ allocatedResources: { cpu: '150m' }, resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } });
    const pending = build(testPod(), withResizePending(readyRuntime(), { reason: 'Infeasible', message: 'too big' }));
    expect(cond(pending, 'PodResizePending')).toMatchObject({ status: 'True', reason: 'Infeasible', message: 'too big' });
  });

  it('keeps a terminal phase the apiserver already shows', () => {
    const pod = testPod();
    pod.status = { ...pod.status, phase: 'Failed' };
    expect(build(pod, started(readyRuntime(), app, T0)).phase).toBe('Failed');
  });
});
