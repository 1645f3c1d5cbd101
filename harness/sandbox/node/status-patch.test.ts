import { describe, expect, it } from 'vitest';
import { buildPodStatus, KUBELET_CONDITIONS } from './pod-status.ts';
import { backOffEvents } from './status-events.ts';
import { coreProjection, statusPatch } from './status-patch.ts';
import { withPullFailed } from './runtime.ts';
import { readyRuntime, started, T0, testPod, timings } from './test-fixtures.ts';

const app = { name: 'app', image: 'nginx:1.25' };

describe('status patch', () => {
  const desired = buildPodStatus({ pod: testPod(), runtime: started(readyRuntime(), app, T0), now: T0, hostIP: '127.0.1.1', timings });

  it('carries the pod UID as a precondition and clears reasons the new conditions lack', () => {
    const patch = statusPatch('uid-1', desired, undefined);
    expect(patch.metadata).toEqual({ uid: 'uid-1' });
    const ready = (patch.status.conditions as Record<string, unknown>[]).find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'True', reason: null, message: null });
  });

  it('deletes transient resize conditions the kubelet no longer reports, and nothing else', () => {
    const observed = {
      conditions: [
        { type: 'PodResizeInProgress', status: 'True' },
        { type: 'InPlaceUpdateReady', status: 'False' },
      ],
    };
    const conds = statusPatch('uid-1', desired, observed).status.conditions as Record<string, unknown>[];
    expect(conds.filter((c) => c.$patch === 'delete')).toEqual([{ type: 'PodResizeInProgress', $patch: 'delete' }]);
    expect(conds.some((c) => c.type === 'InPlaceUpdateReady')).toBe(false);
  });

  it('sees drift only in the fields the kubelet owns', () => {
    const others = { ...desired, conditions: [...desired.conditions, { type: 'InPlaceUpdateReady', status: 'True' }] };
    expect(coreProjection(others, KUBELET_CONDITIONS)).toBe(coreProjection(desired, KUBELET_CONDITIONS));
    expect(coreProjection({ ...desired, phase: 'Pending' }, KUBELET_CONDITIONS)).not.toBe(coreProjection(desired, KUBELET_CONDITIONS));
  });

  it('reports a BackOff event once when a container enters image pull back-off', () => {
    const c = { name: 'app', image: 'registry.invalid/app:1' };
    const pod = testPod({ containers: [c] });
    const rt = withPullFailed(readyRuntime(), 'app', { image: c.image, reason: 'ErrImagePull', message: 'no such host', at: T0 }, {});
    const errImagePull = buildPodStatus({ pod, runtime: rt, now: T0 + 10, hostIP: '127.0.1.1', timings });
    const backOff = buildPodStatus({ pod, runtime: rt, now: T0 + 900, hostIP: '127.0.1.1', timings });
    expect(backOffEvents(pod, undefined, errImagePull)).toEqual([]);
    expect(backOffEvents(pod, errImagePull, backOff)).toEqual([
      { type: 'Normal', reason: 'BackOff', message: 'Back-off pulling image "registry.invalid/app:1"', fieldPath: 'spec.containers{app}' },
    ]);
    expect(backOffEvents(pod, backOff, backOff)).toEqual([]);
  });
});
