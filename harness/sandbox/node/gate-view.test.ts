import { describe, expect, it } from 'vitest';
import { advanceGateView, gateDueAt, initialGateView, withGateView } from './gate-view.ts';
import { podReadyCondition } from './pod-status.ts';
import { testPod, T0 } from './test-fixtures.ts';

const GATE = 'example.com/ready';

function gated(status?: string): ReturnType<typeof testPod> {
  const pod = testPod({ readinessGates: [{ conditionType: GATE }] });
  if (status === undefined) return pod;
  return {
    ...pod,
    status: { ...pod.status, conditions: [...(pod.status?.conditions ?? []), { type: GATE, status, lastTransitionTime: '2025-01-01T00:00:00Z' }] },
  };
}

const readyWith = (pod: ReturnType<typeof testPod>): string => podReadyCondition(pod, { type: 'ContainersReady', status: 'True' }).status;

describe('the readiness gates as the kubelet sees them', () => {
  it('applies a gate change only once it is older than the delay, and wakes the worker then', () => {
    let view = initialGateView(gated('False'));
    view = advanceGateView(view, gated('True'), T0, 2_000);
    expect(readyWith(withGateView(gated('True'), view))).toBe('False');
    expect(gateDueAt(view, 2_000)).toBe(T0 + 2_000);
    view = advanceGateView(view, gated('True'), T0 + 1_999, 2_000);
    expect(readyWith(withGateView(gated('True'), view))).toBe('False');
    view = advanceGateView(view, gated('True'), T0 + 2_000, 2_000);
    expect(readyWith(withGateView(gated('True'), view))).toBe('True');
    expect(gateDueAt(view, 2_000)).toBeUndefined();
  });

  it('counts the delay from the latest change when the gate changes again before it applied', () => {
    let view = initialGateView(gated('False'));
    view = advanceGateView(view, gated('True'), T0, 2_000);
    view = advanceGateView(view, gated('Unknown'), T0 + 1_000, 2_000);
    expect(gateDueAt(view, 2_000)).toBe(T0 + 3_000);
    view = advanceGateView(view, gated('False'), T0 + 1_500, 2_000);
    expect(view.pending).toBeUndefined();
    expect(readyWith(withGateView(gated('False'), view))).toBe('False');
  });

  it('applies at once with no delay (the fast test timings), and leaves a pod without gates as it is', () => {
    const view = advanceGateView(initialGateView(gated()), gated('True'), T0, 0);
    expect(readyWith(withGateView(gated('True'), view))).toBe('True');
    const plain = testPod();
    expect(withGateView(plain, advanceGateView(initialGateView(plain), plain, T0, 2_000))).toBe(plain);
  });

  it('applies a pending change at once in a status from a pod sync made for another cause (a spec or container change)', () => {
    let view = initialGateView(gated('True'));
    view = advanceGateView(view, gated('False'), T0, 2_000);
    expect(readyWith(withGateView(gated('False'), view))).toBe('True');
    view = advanceGateView(view, gated('False'), T0 + 100, 2_000, true);
    expect(view.pending).toBeUndefined();
    expect(readyWith(withGateView(gated('False'), view))).toBe('False');
    // Released while the containers restart: the sync that reports them reads it, with no delay of its own.
    view = advanceGateView(view, gated('True'), T0 + 300, 2_000, true);
    expect(gateDueAt(view, 2_000)).toBeUndefined();
    expect(readyWith(withGateView(gated('True'), view))).toBe('True');
  });

  it('holds Ready True for the delay after the gate went False, as a real kubelet does', () => {
    let view = initialGateView(gated('True'));
    view = advanceGateView(view, gated('False'), T0, 1_000);
    const seen = withGateView(gated('False'), view);
    expect(readyWith(seen)).toBe('True');
    expect(seen.status?.conditions?.map((c) => c.type)).toEqual(['PodScheduled', GATE]);
  });
});
