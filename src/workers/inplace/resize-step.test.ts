import { describe, expect, it } from 'vitest';
import { Label, Reason } from '../../api/keys.ts';
import { quoteKubeletMessage, resizePending, resizeRefusal } from './completion.ts';
import { refusalReason, refusedResize, resizeRefusedTexts } from './refused-resize.ts';
import { nextInPlaceStep } from './step.ts';
import type { InPlaceTarget } from './types.ts';
import type { Pod, PodCondition } from '../../kube/types.ts';

const NOW = new Date('2030-01-01T00:01:00Z');
const small = { requests: { memory: '32Mi' }, limits: { memory: '64Mi' } };
const big = { requests: { memory: '64Mi' }, limits: { memory: '128Mi' } };
const REFUSED = 'cannot decrease memory limits: missing container "app" memory usage';
const target: InPlaceTarget = {
  revision: 'r3',
  gracePeriodSeconds: 0,
  plan: { images: [], metadata: { labels: {}, annotations: {} }, resources: [{ container: 'app', resources: small }] },
};

/** A pod at revision r2 whose spec already asks for `spec` resources while the kubelet reports `actual`. */
function pod(spec: typeof small, actual: typeof small, conditions: PodCondition[] = [], observed = 3): Pod {
  return {
    metadata: { name: 'web-0', uid: 'u0', generation: 3, labels: { [Label.revision]: 'r2' } },
    spec: { containers: [{ name: 'app', image: 'app:2', resources: spec }] },
    status: {
      observedGeneration: observed,
      conditions,
      containerStatuses: [{ name: 'app', image: 'app:2', imageID: 'app@sha256:2', restartCount: 1, ready: true, resources: actual, state: {}, lastState: {} }],
    },
  };
}
const inProgress = (over: Partial<PodCondition> = {}): PodCondition => ({ type: 'PodResizeInProgress', status: 'True', ...over });

describe('resize completion', () => {
  it('is done only when no resize is pending or in progress and the kubelet reports the resources', () => {
    expect(resizePending(pod(small, small), 'app')).toBeUndefined();
    expect(resizePending(pod(small, small, [inProgress()]), 'app')).toEqual({ container: 'app', reason: 'ResizeInProgress' });
    expect(resizePending(pod(small, big), 'app')).toEqual({ container: 'app', reason: 'ResizeNotActuated' });
    expect(resizePending(pod(small, small, [], 2), 'app')).toEqual({ container: 'app', reason: 'StatusNotObserved' });
    const deferred = { type: 'PodResizePending', status: 'True', reason: 'Deferred' } as PodCondition;
    expect(resizePending(pod(small, big, [deferred]), 'app')).toEqual({ container: 'app', reason: 'ResizeDeferred' });
  });

  it('reads PodResizePending with reason Infeasible as a refusal (the node is too small), Deferred as a wait', () => {
    const infeasible = { type: 'PodResizePending', status: 'True', reason: 'Infeasible', message: "Node didn't have enough capacity: memory" } as PodCondition;
    expect(resizePending(pod(small, big, [infeasible]), 'app')).toEqual({ container: 'app', reason: 'ResizeRefused' });
    expect(resizeRefusal(pod(small, big, [infeasible]))).toBe("infeasible on its node: Node didn't have enough capacity: memory");
    expect(resizeRefusal(pod(small, big, [{ ...infeasible, reason: 'Deferred' }]))).toBeUndefined();
    expect(resizeRefusal(pod(small, big, [{ ...infeasible, status: 'False' }]))).toBeUndefined();
  });

  it('reads PodResizeInProgress with reason Error as a refusal, quoting the kubelet bounded and without control characters', () => {
    const refused = pod(small, big, [inProgress({ reason: 'Error', message: REFUSED })]);
    expect(resizePending(refused, 'app')).toEqual({ container: 'app', reason: 'ResizeRefused' });
    expect(resizeRefusal(refused)).toBe(REFUSED);
    expect(resizeRefusal(pod(small, big, [inProgress()]))).toBeUndefined();
    expect(quoteKubeletMessage('a\nb\u0007c')).toBe('a b c');
    expect(quoteKubeletMessage('x'.repeat(1000))).toHaveLength(256);
  });
});

describe('a resize that restarts nothing', () => {
  it('resizes, waits while the kubelet works, then writes the revision label', () => {
    expect(nextInPlaceStep(pod(big, big), target, NOW)).toEqual({ kind: 'resize', containers: [{ name: 'app', resources: small }] });
    expect(nextInPlaceStep(pod(small, big, [inProgress()]), target, NOW)).toMatchObject({ kind: 'waitRunning', reason: 'ResizeInProgress' });
    expect(nextInPlaceStep(pod(small, small), target, NOW)).toMatchObject({ kind: 'patchSpec', revisionLabel: 'r3' });
  });

  it('never labels a pod whose resize the kubelet refused', () => {
    const refused = pod(small, big, [inProgress({ reason: 'Error', message: REFUSED })]);
    expect(nextInPlaceStep(refused, target, NOW)).toEqual({ kind: 'resizeRefused', container: 'app', message: REFUSED });
    expect(refusedResize(refused, target.plan)).toEqual({ container: 'app', message: REFUSED });
    // The refusal is of an earlier resize when ebb's own has not been patched yet.
    expect(refusedResize(pod(big, big, [inProgress({ reason: 'Error', message: REFUSED })]), target.plan)).toBeUndefined();
  });

  it('words the condition and Event for both policies, naming the pod and quoting the kubelet', () => {
    const why = refusalReason(pod(small, big), 'app', REFUSED);
    expect(why.path).toBe('spec.containers[0].resources');
    const held = resizeRefusedTexts({ name: 'web-0', uid: 'u0' }, 'r3', why, 'InPlaceOnly');
    expect(held.condition).toMatchObject({ status: 'True', reason: Reason.resizeRefused });
    expect(held.event).toMatchObject({ type: 'Warning', reason: 'ResizeRefused', action: 'Refuse', related: { kind: 'Pod', name: 'web-0' } });
    expect(held.event.message).toContain('web-0');
    expect(held.event.message).toContain(REFUSED);
    const recreated = resizeRefusedTexts({ name: 'web-0' }, 'r3', why, 'InPlaceIfPossible');
    expect(recreated.event).toMatchObject({ action: 'Recreate' });
    expect(recreated.event.message).toMatch(/^Pod web-0 is recreated for revision r3: the kubelet refused to resize container app: cannot decrease/);
  });
});
