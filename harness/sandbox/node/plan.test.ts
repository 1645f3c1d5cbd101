import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../src/kube/types.ts';
import { admitResize, nextStep, resizeNeedsRestart, type NodeCapacityView, type Step } from './plan.ts';
import { newPodRuntime, withContainerExited, withPullFailed, withResizeAllocated, withResizePending, withVolumesReady, type PodRuntime } from './runtime.ts';
import { readyRuntime, started, T0, testPod, timings } from './test-fixtures.ts';

const node: NodeCapacityView = { allocatable: { cpu: '4', memory: '8Gi', pods: '110' }, otherPodsRequests: [] };
const app: Container = { name: 'app', image: 'nginx:1.25' };
const init: Container = { name: 'migrate', image: 'busybox:1.36' };
const sized: Container = { ...app, resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } };
const bigger = { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } };

function plan(pod: Pod, runtime: PodRuntime, now = T0, capacity = node): Step {
  return nextStep({ pod, runtime, now, timings, node: capacity });
}

/** The step reduced to what the tables compare. */
function brief(s: Step): string {
  switch (s.kind) {
    case 'startContainer':
      return `start ${s.container.name}${s.restart ? ` (${s.restart})` : ''}`;
    case 'containerExited':
      return `exited ${s.container} ${s.exitCode}`;
    case 'wait':
      return s.untilMs === undefined ? 'wait' : `wait +${s.untilMs - T0}`;
    case 'mountVolumes':
      return `mount [${s.claims.join(',')}]`;
    case 'resizePending':
      return `resizePending ${s.verdict?.reason ?? 'cleared'}`;
    case 'allocateResize':
    case 'actuateResize':
      return `${s.kind} ${s.container}`;
    default:
      return s.kind;
  }
}

const pullFailed = (rt: PodRuntime, image: string, at = T0): PodRuntime =>
  withPullFailed(rt, 'app', { image, reason: 'ErrImagePull', message: 'not found', at }, {});
const crashed = (rt: PodRuntime, at: number): PodRuntime => withContainerExited(rt, 'app', { exitCode: 1, reason: 'Error', now: at, crashed: true });

describe('nextStep', () => {
  it.each<[string, Pod, PodRuntime, number, string]>([
    ['a pod being deleted', testPod({}, { deletionTimestamp: '2025-01-01T00:00:00Z' }), started(readyRuntime(), app, T0), T0, 'terminate'],
    ['a pod the apiserver shows as Succeeded', { ...testPod(), status: { phase: 'Succeeded' } }, readyRuntime(), T0, 'wait'],
    [
      'a new pod with a PVC',
      testPod({ volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data-web-0' } }] }),
      newPodRuntime('uid-1', T0),
      T0,
      'mount [data-web-0]',
    ],
    ['volumes ready, no sandbox', testPod(), withVolumesReady(newPodRuntime('uid-1', T0), T0), T0, 'createSandbox'],
    ['a sandbox, no containers', testPod(), readyRuntime(), T0, 'start app'],
    ['an init container to run first', testPod({ initContainers: [init] }), readyRuntime(), T0, 'start migrate'],
    [
      'an init container still running',
      testPod({ initContainers: [init] }),
      started(readyRuntime(), init, T0, { exit: { afterMs: 50, exitCode: 0 } }),
      T0 + 10,
      'wait +50',
    ],
    [
      'an init container at its end',
      testPod({ initContainers: [init] }),
      started(readyRuntime(), init, T0, { exit: { afterMs: 50, exitCode: 0 } }),
      T0 + 50,
      'exited migrate 0',
    ],
    [
      'init containers done',
      testPod({ initContainers: [init] }),
      withContainerExited(started(readyRuntime(), init, T0), 'migrate', { exitCode: 0, reason: 'Completed', now: T0, crashed: false }),
      T0,
      'start app',
    ],
    ['a ready container', testPod(), started(readyRuntime(), app, T0), T0 + 10, 'wait'],
    ['a container before its probe passes', testPod(), started(readyRuntime(), app, T0, { readinessMs: 300 }), T0 + 10, 'wait +300'],
    ['a changed image', testPod({ containers: [{ ...app, image: 'nginx:1.26' }] }), started(readyRuntime(), app, T0), T0 + 10, 'start app (definitionChanged)'],
    ['a failed pull in the ErrImagePull half of its back-off', testPod(), pullFailed(readyRuntime(), 'nginx:1.25'), T0 + 100, 'wait +500'],
    ['a failed pull in the ImagePullBackOff half', testPod(), pullFailed(readyRuntime(), 'nginx:1.25'), T0 + 600, 'wait +1000'],
    ['a failed pull whose back-off ended', testPod(), pullFailed(readyRuntime(), 'nginx:1.25'), T0 + 1_000, 'start app'],
    [
      'a failed pull of an image the spec no longer has',
      testPod({ containers: [{ ...app, image: 'nginx:1.27' }] }),
      pullFailed(readyRuntime(), 'nginx:1.25'),
      T0 + 100,
      'start app',
    ],
    ['a crashing container at its exit time', testPod(), started(readyRuntime(), app, T0, { exit: { afterMs: 200, exitCode: 1 } }), T0 + 200, 'exited app 1'],
    ['a first crash (restarts at once)', testPod(), crashed(started(readyRuntime(), app, T0), T0 + 200), T0 + 200, 'start app'],
    [
      'a second crash (back-off)',
      testPod(),
      crashed(started(crashed(started(readyRuntime(), app, T0), T0 + 200), app, T0 + 200), T0 + 400),
      T0 + 400,
      'wait +1400',
    ],
    ['a failed container with restartPolicy Never', testPod({ restartPolicy: 'Never' }), crashed(started(readyRuntime(), app, T0), T0 + 200), T0 + 300, 'wait'],
  ])('%s → %s', (_name, pod, rt, now, want) => {
    expect(brief(plan(pod, rt, now))).toBe(want);
  });

  it('waits for a sidecar to start before the next init container', () => {
    const sidecar: Container = { name: 'proxy', image: 'envoy:1', restartPolicy: 'Always', startupProbe: {} };
    const pod = testPod({ initContainers: [sidecar, init] });
    const rt = started(readyRuntime(), sidecar, T0);
    expect(
      brief(
        plan(
          pod,
          { ...rt, containers: { proxy: { ...rt.containers.proxy!, phase: { kind: 'running', startedAt: T0, startedProbeAt: T0 + 100, readyAt: T0 + 100 } } } },
          T0 + 10,
        ),
      ),
    ).toBe('wait +100');
    expect(brief(plan(pod, rt, T0 + 10))).toBe('start migrate');
  });
});

describe('in-place resize planning', () => {
  const running = (): PodRuntime => started(readyRuntime(), sized, T0);

  it.each<[string, Pod, PodRuntime, NodeCapacityView, string]>([
    ['spec resources changed, node has room', testPod({ containers: [{ ...sized, resources: bigger }] }), running(), node, 'allocateResize app'],
    [
      'allocated but not yet actuated',
      testPod({ containers: [{ ...sized, resources: bigger }] }),
      withResizeAllocated(running(), 'app', bigger),
      node,
      'actuateResize app',
    ],
    [
      'allocated, memory policy RestartContainer, memory changed',
      testPod({
        containers: [
          {
            ...sized,
            resources: { ...bigger, requests: { cpu: '1', memory: '2Gi' }, limits: { cpu: '1', memory: '2Gi' } },
            resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
          },
        ],
      }),
      withResizeAllocated(running(), 'app', { requests: { cpu: '1', memory: '2Gi' }, limits: { cpu: '1', memory: '2Gi' } }),
      node,
      'start app (resize)',
    ],
    [
      'more than the node has',
      testPod({ containers: [{ ...sized, resources: { requests: { cpu: '8' }, limits: { cpu: '8' } } }] }),
      running(),
      node,
      'resizePending Infeasible',
    ],
    [
      'more than is free now',
      testPod({ containers: [{ ...sized, resources: bigger }] }),
      running(),
      { ...node, otherPodsRequests: [{ cpu: '3' }] },
      'resizePending Deferred',
    ],
    [
      'a pending resize that no longer applies',
      testPod({ containers: [sized] }),
      withResizePending(running(), { reason: 'Deferred', message: 'x' }),
      node,
      'resizePending cleared',
    ],
  ])('%s → %s', (_name, pod, rt, capacity, want) => {
    expect(brief(plan(pod, rt, T0 + 10, capacity))).toBe(want);
  });

  it('re-evaluates a Deferred resize periodically instead of rewriting it', () => {
    const pod = testPod({ containers: [{ ...sized, resources: bigger }] });
    const busy = { ...node, otherPodsRequests: [{ cpu: '3' }] };
    const verdict = admitResize(pod, busy);
    expect(verdict?.message).toBe("Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000");
    expect(brief(plan(pod, withResizePending(running(), verdict), T0 + 10, busy))).toBe('wait +1010');
  });

  it.each<[string, string | undefined, boolean]>([
    ['default policy', undefined, false],
    ['NotRequired', 'NotRequired', false],
    ['RestartContainer', 'RestartContainer', true],
  ])('a cpu change with %s restarts: %s', (_name, policy, want) => {
    const c: Container = { ...sized, ...(policy ? { resizePolicy: [{ resourceName: 'cpu', restartPolicy: policy }] } : {}) };
    expect(resizeNeedsRestart(c, sized.resources ?? {}, bigger)).toBe(want);
  });
});
