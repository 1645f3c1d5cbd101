import { describe, expect, it } from 'vitest';
import { Annotation, Label } from '../../api/keys.ts';
import { IN_PLACE_GATE } from './gate.ts';
import { serializeState, type InPlaceState } from './state.ts';
import { nextInPlaceStep, SAFETY_RECHECK_MS } from './step.ts';
import type { InPlaceTarget } from './types.ts';
import type { ContainerStatus, Pod, PodCondition } from '../../kube/types.ts';

const target: InPlaceTarget = {
  revision: 'r2',
  gracePeriodSeconds: 0,
  plan: { images: [{ container: 'app', image: 'app:2' }], metadata: { labels: {}, annotations: {} }, resources: [] },
};

const state = (over: Partial<InPlaceState> = {}): InPlaceState => ({
  revision: 'r2',
  startedAt: '2030-01-01T00:00:09.000Z',
  oldImageIDs: { app: 'app@sha256:1', side: 'side@sha256:1' },
  oldContainerIDs: { app: 'c1', side: 's1' },
  oldRestartCounts: { app: 0, side: 0 },
  oldImages: { app: 'app:1' },
  newImages: { app: 'app:2' },
  resources: {},
  oldResources: {},
  batches: [['app']],
  batch: 0,
  patchedAt: ['2030-01-01T00:00:10.700Z'],
  ...over,
});

const OLD: ContainerStatus = {
  name: 'app',
  image: 'app:1',
  lastState: {},
  imageID: 'app@sha256:1',
  containerID: 'c1',
  restartCount: 0,
  ready: true,
  state: { running: { startedAt: '2030-01-01T00:00:01Z' } },
};
const NEW_STARTING: ContainerStatus = {
  ...OLD,
  image: 'app:2',
  imageID: 'app@sha256:2',
  containerID: 'c2',
  restartCount: 1,
  ready: false,
  state: { running: { startedAt: '2030-01-01T00:00:11Z' } },
};
const NEW_READY: ContainerStatus = { ...NEW_STARTING, ready: true };
const SIDE_OLD: ContainerStatus = { ...OLD, name: 'side', image: 'side:1', imageID: 'side@sha256:1', containerID: 's1' };

const gate = (status: 'True' | 'False', reason: string): PodCondition => ({ type: IN_PLACE_GATE, status, reason, lastTransitionTime: '2030-01-01T00:00:10Z' });
const OUT = gate('False', 'StartInPlaceUpdate');
const RELEASED = gate('True', 'InPlaceContainersRestarting');
const ready = (status: 'True' | 'False'): PodCondition => ({ type: 'Ready', status });

/** A pod after its last batch was patched (generation 2), the kubelet at `observed`. */
function pod(statuses: ContainerStatus[], conditions: PodCondition[], over: { st?: InPlaceState; observed?: number | null; containers?: string[] } = {}): Pod {
  const names = over.containers ?? ['app'];
  return {
    metadata: {
      name: 'p',
      resourceVersion: '9',
      generation: 2,
      labels: { [Label.revision]: 'r2' },
      annotations: { [Annotation.inPlaceUpdateState]: serializeState(over.st ?? state()) },
    },
    spec: { containers: names.map((n) => ({ name: n, image: `${n}:2` })), readinessGates: [{ conditionType: IN_PLACE_GATE }] },
    status: { ...(over.observed === null ? {} : { observedGeneration: over.observed ?? 2 }), conditions, containerStatuses: statuses },
  };
}

const now = new Date('2030-01-01T00:00:11.200Z');
const waiting = (reason: string) => ({ kind: 'waitRunning', reason, container: 'app', afterMs: SAFETY_RECHECK_MS });

describe('early release of the gate', () => {
  it('sets the gate True once the kubelet has observed the image patch, the old container still reported', () => {
    const step = nextInPlaceStep(pod([OLD], [OUT, ready('False')]), target, now);
    expect(step).toMatchObject({
      kind: 'gate',
      condition: { type: IN_PLACE_GATE, status: 'True', reason: 'InPlaceContainersRestarting', lastTransitionTime: '2030-01-01T00:00:11Z' },
    });
  });

  it('waits while the kubelet has not observed the patch, or does not report observedGeneration', () => {
    expect(nextInPlaceStep(pod([OLD], [OUT], { observed: 1 }), target, now)).toMatchObject({ kind: 'waitRunning', reason: 'StatusNotObserved' });
    expect(nextInPlaceStep(pod([OLD], [OUT], { observed: null }), target, now)).toEqual(waiting('ContainerNotRestarted'));
  });

  it('keeps the gate False while an earlier batch is not done, when a container is resized, or once held', () => {
    const twoBatches = state({ batches: [['side'], ['app']], batch: 1, newImages: { app: 'app:2', side: 'side:2' } });
    const side = pod([OLD, SIDE_OLD], [OUT], { st: twoBatches, containers: ['app', 'side'] });
    expect(nextInPlaceStep(side, target, now)).toMatchObject({ kind: 'waitRunning', container: 'side', reason: 'ContainerNotRestarted' });
    const resized = state({ resources: { app: { limits: { cpu: '2' } } }, oldResources: { app: { limits: { cpu: '1' } } } });
    expect(nextInPlaceStep(pod([OLD], [OUT], { st: resized }), target, now).kind).not.toBe('gate');
    expect(nextInPlaceStep(pod([OLD], [gate('False', 'InPlaceGateHeld')]), target, now)).toEqual(waiting('ContainerNotRestarted'));
  });

  it('waits after the release until the new container is ready, then finishes keeping the transition time', () => {
    expect(nextInPlaceStep(pod([OLD], [RELEASED, ready('False')]), target, now)).toEqual(waiting('ContainerNotRestarted'));
    expect(nextInPlaceStep(pod([NEW_STARTING], [RELEASED, ready('False')]), target, now)).toEqual(waiting('ContainerNotReady'));
    expect(nextInPlaceStep(pod([NEW_READY], [RELEASED, ready('True')]), target, now)).toMatchObject({
      kind: 'finish',
      removeAnnotation: true,
      condition: { status: 'True', reason: 'InPlaceUpdateDone', lastTransitionTime: '2030-01-01T00:00:10Z' },
    });
  });

  it('holds the gate False again when the pod is Ready while the old container still runs (its stop failed)', () => {
    const step = nextInPlaceStep(pod([OLD], [RELEASED, ready('True')]), target, now);
    expect(step).toMatchObject({ kind: 'gate', condition: { status: 'False', reason: 'InPlaceGateHeld', lastTransitionTime: '2030-01-01T00:00:11Z' } });
  });
});
