/**
 * Scenario tests: plan → fake execute (the runtime transitions, with simulated time) → build status, in a
 * loop, checking kubelet invariants after every step.
 */
import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../../src/kube/types.ts';
import { nextStep, type Step } from '../../../../harness/sandbox/node/plan.ts';
import { buildPodStatus, type KubeletPodStatus } from '../../../../harness/sandbox/node/pod-status.ts';
import {
  newPodRuntime,
  withAllStopped,
  withContainerExited,
  withContainerStarted,
  withResizeActuated,
  withResizeAllocated,
  withResizePending,
  withSandbox,
  withVolumesReady,
  type PodRuntime,
} from '../../../../harness/sandbox/node/runtime.ts';
import { T0, testPod, timings } from '../../../../harness/sandbox/node/test-fixtures.ts';

const node = { allocatable: { cpu: '4', memory: '8Gi' }, otherPodsRequests: [] };

interface World {
  pod: Pod;
  rt: PodRuntime;
  now: number;
  ids: number;
  history: KubeletPodStatus[];
}

function execute(w: World, step: Exclude<Step, { kind: 'wait' }>): void {
  switch (step.kind) {
    case 'mountVolumes':
      w.rt = withVolumesReady(w.rt, w.now);
      return;
    case 'createSandbox':
      w.now += timings.sandboxMs;
      w.rt = withSandbox(w.rt, '10.244.0.7', w.now);
      return;
    case 'startContainer': {
      const c: Container = step.container;
      if (step.restart) w.rt = withContainerExited(w.rt, c.name, { exitCode: 0, reason: 'Completed', now: w.now, crashed: false });
      w.now += timings.startMs;
      w.rt = withContainerStarted(w.rt, {
        name: c.name,
        image: c.image,
        imageRef: `docker.io/library/x@sha256:${c.image.length.toString(16).padStart(64, '0')}`,
        containerId: `containerd://${(++w.ids).toString(16).padStart(64, '0')}`,
        now: w.now,
        startupMs: 0,
        readinessMs: c.readinessProbe ? timings.readyMs : 0,
        ...(step.containerKind === 'init' ? { exit: { afterMs: timings.initRunMs, exitCode: 0 } } : {}),
        resources: step.resources,
      });
      return;
    }
    case 'containerExited':
      w.rt = withContainerExited(w.rt, step.container, { exitCode: step.exitCode, reason: 'Completed', now: w.now, crashed: step.exitCode !== 0 });
      return;
    case 'allocateResize':
      w.rt = withResizeAllocated(w.rt, step.container, step.resources);
      return;
    case 'actuateResize':
      w.now += timings.resizeMs;
      w.rt = withResizeActuated(w.rt, step.container);
      return;
    case 'resizePending':
      w.rt = withResizePending(w.rt, step.verdict);
      return;
    case 'terminate':
      w.rt = withAllStopped(w.rt, w.now);
  }
}

const PHASE_ORDER = ['Pending', 'Running', 'Succeeded', 'Failed'];

function checkInvariants(w: World, s: KubeletPodStatus): void {
  const prev = w.history.at(-1);
  if (prev) {
    expect(PHASE_ORDER.indexOf(s.phase), `phase ${prev.phase} → ${s.phase}`).toBeGreaterThanOrEqual(PHASE_ORDER.indexOf(prev.phase));
    if (prev.podIP) expect(s.podIP).toBe(prev.podIP);
    for (const c of s.containerStatuses) {
      const before = prev.containerStatuses.find((x) => x.name === c.name);
      expect(c.restartCount).toBeGreaterThanOrEqual(before?.restartCount ?? 0);
    }
  }
  const ready = s.conditions.find((c) => c.type === 'Ready')?.status === 'True';
  if (ready) expect(s.containerStatuses.every((c) => c.ready)).toBe(true);
}

/** Runs plan/execute until the pod is quiet (a wait with no deadline) or `until` holds. */
function run(w: World, until: (s: KubeletPodStatus) => boolean, maxSteps = 50): KubeletPodStatus {
  for (let i = 0; i < maxSteps; i++) {
    const s = buildPodStatus({ pod: w.pod, runtime: w.rt, now: w.now, hostIP: '127.0.1.1', timings, previous: w.history.at(-1)?.conditions });
    checkInvariants(w, s);
    w.history.push(s);
    if (until(s)) return s;
    const step = nextStep({ pod: w.pod, runtime: w.rt, now: w.now, timings, node });
    if (step.kind === 'wait') {
      if (step.untilMs === undefined) return s;
      w.now = Math.max(w.now, step.untilMs);
    } else execute(w, step);
  }
  throw new Error('no quiescence');
}

const ready = (s: KubeletPodStatus): boolean => s.conditions.some((c) => c.type === 'Ready' && c.status === 'True');

describe('simulated kubelet scenarios', () => {
  it('takes a pod with an init container and probes to Ready, then restarts one container on an image change', () => {
    const app: Container = { name: 'app', image: 'nginx:1.25', readinessProbe: {} };
    const side: Container = { name: 'side', image: 'redis:7' };
    const w: World = {
      pod: testPod({ initContainers: [{ name: 'init', image: 'busybox:1' }], containers: [app, side] }),
      rt: newPodRuntime('uid-1', T0),
      now: T0,
      ids: 0,
      history: [],
    };
    const first = run(w, ready);
    expect(first.phase).toBe('Running');
    expect(first.initContainerStatuses?.[0]?.state.terminated?.reason).toBe('Completed');
    const before = first.containerStatuses;

    w.pod = { ...w.pod, spec: { ...w.pod.spec, containers: [{ ...app, image: 'nginx:1.26' }, side] } };
    const after = run(w, (s) => ready(s) && s.containerStatuses[0]?.restartCount === 1);
    expect(after.containerStatuses[0]?.containerID).not.toBe(before[0]?.containerID);
    expect(after.containerStatuses[0]?.lastState.terminated?.containerID).toBe(before[0]?.containerID);
    expect(after.containerStatuses[1]).toEqual(before[1]);
    // The pod went through not-ready while the new container's probe had not passed.
    expect(w.history.some((s) => s.containerStatuses[0]?.restartCount === 1 && !ready(s))).toBe(true);
  });

  it('resizes without a restart and clears PodResizeInProgress', () => {
    const app: Container = { name: 'app', image: 'nginx:1.25', resources: { requests: { cpu: '1' }, limits: { cpu: '1' } } };
    const w: World = { pod: testPod({ containers: [app] }), rt: newPodRuntime('uid-1', T0), now: T0, ids: 0, history: [] };
    run(w, ready);
    w.pod = { ...w.pod, spec: { ...w.pod.spec, containers: [{ ...app, resources: { requests: { cpu: '2' }, limits: { cpu: '2' } } }] } };
    const done = run(w, () => false);
    expect(w.history.some((s) => s.conditions.some((c) => c.type === 'PodResizeInProgress'))).toBe(true);
    expect(done.conditions.map((c) => c.type)).not.toContain('PodResizeInProgress');
    expect(done.containerStatuses[0]).toMatchObject({
      restartCount: 0,
      resources: { requests: { cpu: '2' }, limits: { cpu: '2' } },
      allocatedResources: { cpu: '2' },
    });
  });

  it('ends in a terminal phase when deleted', () => {
    const w: World = { pod: testPod(), rt: newPodRuntime('uid-1', T0), now: T0, ids: 0, history: [] };
    run(w, ready);
    w.pod = { ...w.pod, metadata: { ...w.pod.metadata, deletionTimestamp: '2025-01-01T00:01:00Z' } };
    const step = nextStep({ pod: w.pod, runtime: w.rt, now: w.now, timings, node });
    expect(step.kind).toBe('terminate');
    execute(w, step as Exclude<Step, { kind: 'wait' }>);
    const s = buildPodStatus({ pod: w.pod, runtime: w.rt, now: w.now, hostIP: '127.0.1.1', timings });
    expect(s.phase).toBe('Succeeded');
    expect(s.containerStatuses[0]?.state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(s.podIP).toBe('10.244.0.7');
  });
});
