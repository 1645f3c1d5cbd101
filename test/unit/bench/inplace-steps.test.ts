/**
 * The in-place bench's per-pod step points, from the pod versions a watch delivers: with the early gate the gate
 * turns True before the restart, so the pod's end is its Ready with the new container ready, not a Ready the
 * kubelet reported before the restart; Ready on the new spec with the gate False, and a gate held False again,
 * are recorded.
 */
import { describe, expect, it } from 'vitest';
import { markSteps, type PodSteps } from '../../../bench/inplace/steps.ts';
import { READINESS_GATE_IN_PLACE_UPDATE_READY, Reason } from '../../../src/api/keys.ts';
import type { Pod, Stored } from '../../../src/kube/types.ts';

const OLD = 'example.com/app:v1';
const NEW = 'example.com/app:v2';

function version(o: { image: string; gate: string; reason?: string; ready: boolean; running: string; containerReady: boolean }): Stored<Pod> {
  return {
    metadata: { name: 'ip-0', namespace: 'ns', uid: 'u', resourceVersion: '1' },
    spec: { containers: [{ name: 'main', image: o.image }] },
    status: {
      conditions: [
        { type: READINESS_GATE_IN_PLACE_UPDATE_READY, status: o.gate, ...(o.reason ? { reason: o.reason } : {}) },
        { type: 'Ready', status: o.ready ? 'True' : 'False' },
      ],
      containerStatuses: [{ name: 'main', image: o.running, imageID: '', ready: o.containerReady, restartCount: 1, state: { running: {} } }],
    },
  } as Stored<Pod>;
}

describe('markSteps', () => {
  it('ends a pod at Ready with its new container ready, not at a Ready the kubelet reported before the restart', () => {
    const s: PodSteps = { name: 'ip-0', uid: 'u', node: 'n' };
    const seen: [number, Stored<Pod>][] = [
      [1, version({ image: OLD, gate: 'False', ready: true, running: OLD, containerReady: true })],
      [2, version({ image: NEW, gate: 'False', ready: true, running: OLD, containerReady: true })],
      // The early gate, while the kubelet still reports the old container ready.
      [3, version({ image: NEW, gate: 'True', ready: true, running: OLD, containerReady: true })],
      [4, version({ image: NEW, gate: 'False', reason: Reason.inPlaceGateHeld, ready: true, running: OLD, containerReady: true })],
      [5, version({ image: NEW, gate: 'True', ready: true, running: NEW, containerReady: true })],
    ];
    for (const [at, p] of seen) markSteps(s, p, NEW, at);
    expect(s).toMatchObject({ gateFalse: 1, specImage: 2, gateTrue: 3, containerReady: 5, ready: 5, readyWhileGateFalse: 2, gateHeld: 4 });
  });

  it('records neither a stale Ready nor a held gate when the kubelet drops Ready at the patch', () => {
    const s: PodSteps = { name: 'ip-0', uid: 'u', node: 'n' };
    markSteps(s, version({ image: OLD, gate: 'False', ready: true, running: OLD, containerReady: true }), NEW, 1);
    markSteps(s, version({ image: NEW, gate: 'False', ready: false, running: OLD, containerReady: true }), NEW, 2);
    markSteps(s, version({ image: NEW, gate: 'True', ready: false, running: OLD, containerReady: true }), NEW, 3);
    markSteps(s, version({ image: NEW, gate: 'True', ready: true, running: NEW, containerReady: true }), NEW, 4);
    expect(s).toMatchObject({ gateFalse: 1, gateTrue: 3, containerReady: 4, ready: 4 });
    expect(s.readyWhileGateFalse).toBeUndefined();
    expect(s.gateHeld).toBeUndefined();
  });
});
