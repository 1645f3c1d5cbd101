import { describe, expect, it } from 'vitest';
import { Annotation, Label } from '../../api/keys.ts';
import { IN_PLACE_GATE } from './gate.ts';
import { inPlaceStatus } from './status.ts';
import { serializeState, type InPlaceState } from './state.ts';
import { nextInPlaceStep, SAFETY_RECHECK_MS, stepWait } from './step.ts';
import type { InPlaceTarget } from './types.ts';
import type { ContainerStatus, Pod, PodCondition } from '../../kube/types.ts';

const PATCHED_AT = '2030-01-01T00:00:10.700Z';
const target: InPlaceTarget = {
  revision: 'r2',
  gracePeriodSeconds: 0,
  plan: { images: [{ container: 'app', image: 'app:2' }], metadata: { labels: {}, annotations: {} }, resources: [] },
};

const state = (over: Partial<InPlaceState> = {}): InPlaceState => ({
  revision: 'r2',
  startedAt: '2030-01-01T00:00:09.000Z',
  oldImageIDs: { app: 'app@sha256:1' },
  oldContainerIDs: { app: 'c1' },
  oldRestartCounts: { app: 0 },
  oldImages: { app: 'app:1' },
  newImages: { app: 'app:2' },
  resources: {},
  oldResources: {},
  batches: [['app']],
  batch: 0,
  patchedAt: [PATCHED_AT],
  ...over,
});

const GATE_OUT: PodCondition = { type: IN_PLACE_GATE, status: 'False', reason: 'StartInPlaceUpdate' };
/** The gate released early: True while the containers restart. */
const RELEASED: PodCondition = { type: IN_PLACE_GATE, status: 'True', reason: 'InPlaceContainersRestarting', lastTransitionTime: '2030-01-01T00:00:11Z' };

interface PodOptions {
  state?: InPlaceState;
  generation?: number;
  /** status.observedGeneration; null: not reported (a kubelet before the field). */
  observed?: number | null;
  deleting?: boolean;
  conditions?: PodCondition[];
}

function pod(s: Partial<ContainerStatus>, over: PodOptions = {}): Pod {
  const st = over.state ?? state();
  return {
    metadata: {
      name: 'p',
      resourceVersion: '9',
      generation: over.generation ?? 2,
      labels: { [Label.revision]: 'r2' },
      annotations: { [Annotation.inPlaceUpdateState]: serializeState(st) },
      ...(over.deleting ? { deletionTimestamp: '2030-01-01T00:00:00Z' } : {}),
    },
    spec: {
      containers: [{ name: 'app', image: 'app:2' }],
      initContainers: [{ name: 'init', image: 'init:1' }],
      readinessGates: [{ conditionType: IN_PLACE_GATE }],
    },
    status: {
      ...(over.observed === null ? {} : { observedGeneration: over.observed ?? 2 }),
      conditions: over.conditions ?? [GATE_OUT],
      containerStatuses: [
        {
          name: 'app',
          image: 'app:2',
          lastState: {},
          imageID: 'app@sha256:2',
          containerID: 'c2',
          restartCount: 1,
          ready: true,
          state: { running: { startedAt: '2030-01-01T00:00:10Z' } },
          ...s,
        },
      ],
    },
  };
}

const now = new Date('2030-01-01T00:00:12Z');

describe('completion of an updated container', () => {
  it.each<[string, Partial<ContainerStatus>, string]>([
    ['new image, restarted in the same second as the patch (second precision), ready', {}, 'finish'],
    ['same imageID (tag moved to the same digest) but a new container', { imageID: 'app@sha256:1' }, 'finish'],
    ['same imageID, same containerID, restartCount grew', { imageID: 'app@sha256:1', containerID: 'c1' }, 'finish'],
    ['nothing changed yet', { imageID: 'app@sha256:1', containerID: 'c1', restartCount: 0 }, 'ContainerNotRestarted'],
    ['restarted before the patch second', { state: { running: { startedAt: '2030-01-01T00:00:09Z' } } }, 'ContainerNotRestarted'],
    ['restarted, not ready', { ready: false }, 'ContainerNotReady'],
    ['waiting (pulling)', { state: { waiting: { reason: 'ContainerCreating' } }, ready: false }, 'ContainerNotRunning'],
  ])('%s → %s', (_n, s, expected) => {
    const step = nextInPlaceStep(pod(s, { conditions: [RELEASED] }), target, now);
    if (expected === 'finish')
      expect(step).toMatchObject({ kind: 'finish', removeAnnotation: true, condition: { status: 'True', reason: 'InPlaceUpdateDone' } });
    else expect(step).toEqual({ kind: 'waitRunning', reason: expected, container: 'app', afterMs: SAFETY_RECHECK_MS });
  });

  it('waits while the kubelet has not observed the patched spec (status.observedGeneration)', () => {
    expect(nextInPlaceStep(pod({}, { observed: 1 }), target, now)).toMatchObject({ kind: 'waitRunning', reason: 'StatusNotObserved' });
  });

  it('does not wait for a regular init container (it runs again only with a new sandbox)', () => {
    const st = state({ newImages: { init: 'init:2' }, oldImages: { init: 'init:1' }, batches: [['init']], oldImageIDs: { init: 'x' } });
    expect(nextInPlaceStep(pod({}, { state: st }), target, now).kind).toBe('finish');
  });
});

describe('nextInPlaceStep', () => {
  it('leaves a terminating pod alone', () => {
    expect(nextInPlaceStep(pod({}, { deleting: true }), target, now)).toMatchObject({ kind: 'wait', reason: 'PodTerminating' });
  });

  it('asks for a timer for the rest of the grace period, and none after it', () => {
    const p = pod({}, { state: state({ batch: -1, patchedAt: [] }) });
    const step = nextInPlaceStep(p, { ...target, gracePeriodSeconds: 5 }, new Date('2030-01-01T00:00:12.500Z'));
    expect(step).toMatchObject({ kind: 'wait', reason: 'InPlaceGracePeriod' });
    expect(stepWait(step)).toEqual({ reason: 'in-place-grace-period', afterMs: 1500 });
    expect(nextInPlaceStep(p, { ...target, gracePeriodSeconds: 5 }, new Date('2030-01-01T00:00:14Z')).kind).toBe('patchSpec');
  });

  it('starts over for another revision', () => {
    const step = nextInPlaceStep(pod({}), { ...target, revision: 'r3' }, now);
    expect(step).toMatchObject({ kind: 'start', state: { revision: 'r3' }, condition: { status: 'False', reason: 'StartInPlaceUpdate' } });
  });

  it('is done for a pod at the target revision with the gate True, and without the gate', () => {
    const p = pod({});
    delete p.metadata.annotations;
    p.status!.conditions = [{ type: IN_PLACE_GATE, status: 'True' }];
    expect(nextInPlaceStep(p, target, now)).toEqual({ kind: 'done' });
    delete p.spec.readinessGates;
    p.status!.conditions = [];
    expect(nextInPlaceStep(p, target, now)).toEqual({ kind: 'done' });
  });

  it('patches a regular init container image with the label, without the gate (it does not run again)', () => {
    const p = pod({});
    delete p.metadata.annotations;
    p.metadata.labels = { [Label.revision]: 'r1' };
    const step = nextInPlaceStep(p, { ...target, plan: { ...target.plan, images: [{ container: 'init', image: 'init:2', init: true }] } }, now);
    expect(step).toEqual({
      kind: 'patchSpec',
      batch: 0,
      images: [{ container: 'init', image: 'init:2', init: true }],
      labels: {},
      // Nothing restarts: the counts as they are become the pod's restart baseline at r2.
      annotations: { [Annotation.restartBaseline]: JSON.stringify({ revision: 'r2', restarts: { app: 1 } }) },
      revisionLabel: 'r2',
    });
  });

  it('writes the restart baseline when it finishes: the count before the update plus its one restart', () => {
    const restarted = pod({ restartCount: 1 }, { state: state({ oldRestartCounts: { app: 0 } }) });
    expect(nextInPlaceStep(restarted, target, now)).toMatchObject({
      kind: 'finish',
      baseline: JSON.stringify({ revision: 'r2', restarts: { app: 1 } }),
    });
    // A restart beyond the update's own is not part of the baseline: the analysis counts it.
    const crashed = pod({ restartCount: 3 }, { state: state({ oldRestartCounts: { app: 0 } }) });
    expect(nextInPlaceStep(crashed, target, now)).toMatchObject({ kind: 'finish', baseline: JSON.stringify({ revision: 'r2', restarts: { app: 1 } }) });
  });

  it('starts over when the state annotation is not valid JSON state', () => {
    const p = pod({});
    p.metadata.annotations = { [Annotation.inPlaceUpdateState]: '{"revision":' };
    p.metadata.labels = { [Label.revision]: 'r1' };
    expect(nextInPlaceStep(p, target, now).kind).toBe('start');
  });
});

describe('inPlaceStatus', () => {
  it.each<[string, Pod, object]>([
    [
      'waiting for a container',
      pod({ ready: false }),
      { updating: true, phase: 'Waiting', revision: 'r2', waitingFor: { container: 'app', reason: 'ContainerNotReady' } },
    ],
    ['all done but not finished', pod({}), { updating: true, phase: 'Finishing', batchesPatched: 1, batches: 1 }],
    ['in its grace period', pod({}, { state: state({ batch: -1 }) }), { updating: true, phase: 'Starting', batchesPatched: 0 }],
    ['between batches', pod({}, { state: state({ batches: [['app'], ['log']] }) }), { phase: 'Patching', batchesPatched: 1, batches: 2 }],
  ])('%s', (_n, p, expected) => expect(inPlaceStatus(p)).toMatchObject(expected));
});
