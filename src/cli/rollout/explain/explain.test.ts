import { describe, expect, it } from 'vitest';
import { Annotation } from '../../../api/keys.ts';
import type { Named, Pod } from '../../../kube/types.ts';
import type { Action } from '../../../workers/app/model/actions.ts';
import { serializeState, type InPlaceState } from '../../../workers/inplace/state.ts';
import { app, at, cond, imageList, NOW, pod } from '../../../../test/unit/cli/explain-fixtures.ts';
import { explain } from './explain.ts';
import type { ExplainInput } from './model.ts';

const input = (over: Partial<ExplainInput>): ExplainInput => ({
  app: app(),
  pods: [pod(0), pod(1), pod(2, { revision: 'web-b' })],
  imageLists: [],
  plan: { actions: [] },
  queue: { timers: [] },
  notes: [],
  now: NOW,
  ...over,
});

const rowOf = (e: ReturnType<typeof explain>, name: string) => e.pods.find((p) => p.name === name);
const replacement = { revision: 'web-b', pod: { metadata: { name: 'web-1' } } as Named<Pod>, claims: [] };
const deleteWeb1: Action = { kind: 'deletePod', name: 'web-1', uid: 'u-1', ordinal: 1, cause: 'update', revision: 'web-a', replacement };

describe('explain', () => {
  it('a held rollout: the refusal is the wait, on the pods it names, and the planned delete is said not to happen', () => {
    const held = 'the apiserver would refuse the pods of revision web-b (Forbidden): denied by policy; pod web-1 is kept running; fix spec.template';
    const e = explain(
      input({
        app: app({ conditions: [cond('Progressing', 'True', 'RollingUpdate'), cond('RolloutHeld', 'True', 'ReplacementRefused', held)] }),
        plan: { actions: [deleteWeb1] },
      }),
    );
    expect(e.waits).toContainEqual({ kind: 'held', message: held });
    expect(rowOf(e, 'web-1')?.waits).toContainEqual({ kind: 'held', message: 'kept running: the dry run refuses its replacement (see WAITING FOR)' });
    expect(rowOf(e, 'web-0')?.waits.map((w) => w.kind)).toEqual(['turn']);
    expect(rowOf(e, 'web-1')?.next).toEqual([
      'delete web-1 (recreate it at the update revision): not done while the rollout is held (the dry run refuses the replacement)',
    ]);
    expect(e.next[0]?.source).toBe('plan');
    expect(e.next[0]?.what).toContain('not done while the rollout is held');
  });

  it('a timed canary pause: the pause with its end, outdated pods waiting for it, and the timer that ends it', () => {
    const until = at(90);
    const e = explain(
      input({
        app: app({
          conditions: [cond('Progressing', 'True', 'CanaryStep'), cond('Paused', 'True', 'CanaryTimedPause', `canary step 2: paused until ${until}`)],
        }),
        queue: { timers: [{ reason: 'canary-pause', dueAt: Date.parse(until) }] },
        plan: { actions: [], wait: { reason: 'canary-pause', afterMs: 90_000 } },
      }),
    );
    expect(e.waits).toEqual([{ kind: 'paused', message: `canary step 2: paused until ${until}`, until }]);
    expect(rowOf(e, 'web-0')?.waits).toEqual([{ kind: 'turn', message: 'the rollout is paused (CanaryTimedPause)' }]);
    expect(rowOf(e, 'web-2')?.waits).toEqual([]);
    // The plan's wait is the timer already set: said once.
    expect(e.next).toEqual([{ at: until, what: 'timer canary-pause: the canary pause step ends', source: 'timer' }]);
  });

  it('a lifecycle hook: the pod names the hook, since when, and the handlers to remove', () => {
    const lifecycle = { preNormal: { labelsHandler: { 'traffic.example/ready': 'false' }, finalizersHandler: ['example.com/warmup'] } };
    const waiting = pod(2, {
      revision: 'web-b',
      ready: false,
      labels: { 'lifecycle.apps.ebb.dev/state': 'PreparingNormal', 'traffic.example/ready': 'false' },
      annotations: { [Annotation.lifecycleSince]: at(-42) },
      containerStatuses: [{ name: 'main', image: 'reg.local/web:2', imageID: 'x', ready: false, restartCount: 0, state: { running: {} }, lastState: {} }],
    });
    const e = explain(
      input({
        app: app({ spec: { lifecycle }, conditions: [cond('LifecycleHookWaiting', 'True', 'WaitingForPreNormal', '1 pod waits for lifecycle hook handlers')] }),
        pods: [pod(0), pod(1), waiting],
      }),
    );
    expect(e.waits).toContainEqual({ kind: 'hook', message: '1 pod waits for lifecycle hook handlers' });
    expect(rowOf(e, 'web-2')?.waits).toEqual([
      {
        kind: 'hook',
        message: `lifecycle hook preNormal since ${at(-42)}: waits until its handlers are removed (label traffic.example/ready=false, finalizer example.com/warmup)`,
      },
      { kind: 'readiness', message: 'container main: running, readiness probe not passed' },
    ]);
  });

  it('a pod still to update that waits on its own hook, or that the plan acts on now, does not wait for its turn', () => {
    const lifecycle = { preDelete: { labelsHandler: { 'traffic.example/serving': 'yes' } } };
    const hooked = pod(1, { labels: { 'lifecycle.apps.ebb.dev/state': 'PreparingDelete', 'traffic.example/serving': 'yes' } });
    const create: Action = {
      kind: 'inPlaceStep',
      name: 'web-0',
      uid: 'u-0',
      ordinal: 0,
      revision: 'web-b',
      pod: pod(0) as never,
      step: { kind: 'finish', removeAnnotation: true, condition: { type: 'InPlaceUpdateReady', status: 'True' } },
    };
    const e = explain(input({ app: app({ spec: { lifecycle } }), pods: [pod(0), hooked, pod(2, { revision: 'web-b' })], plan: { actions: [create] } }));
    expect(rowOf(e, 'web-1')?.waits.map((w) => w.kind)).toEqual(['hook']);
    expect(rowOf(e, 'web-0')?.waits).toEqual([]);
    expect(rowOf(e, 'web-0')?.next).toEqual(['web-0: finish its in-place update (gate InPlaceUpdateReady True)']);
  });

  it('a pause only a person ends is said as what comes next', () => {
    const e = explain(input({ app: app({ conditions: [cond('Paused', 'True', 'PausedBySpec', 'spec.updateStrategy.rollingUpdate.paused is true')] }) }));
    expect(e.next).toEqual([{ what: 'nothing more until someone resumes the rollout (ebb rollout resume app/web)', source: 'status' }]);
    expect(rowOf(e, 'web-0')?.waits).toEqual([{ kind: 'turn', message: 'the rollout is paused (PausedBySpec)' }]);
  });

  it('pre-warm: each node of a pod still to update, with its pulls; a node without entries is NotRequested', () => {
    const images = 'reg.local/web:2';
    const e = explain(
      input({
        app: app({ spec: { imagePrewarm: { enabled: true } }, status: { prewarm: { nodesRequested: 1, nodesPulled: 0, nodesFailed: 0 } } }),
        imageLists: [imageList('node-1', [{ image: images, phase: 'Pulling', attempts: 2, message: 'pulling' }])],
      }),
    );
    expect(e.prewarm?.nodes).toEqual([
      { node: 'node-0', state: 'NotRequested', pulled: 0, images: [], pods: ['web-0'] },
      { node: 'node-1', state: 'Pulling', pulled: 0, images: [{ image: images, phase: 'Pulling', attempts: 2, message: 'pulling' }], pods: ['web-1'] },
    ]);
    expect(rowOf(e, 'web-1')?.waits[0]).toEqual({ kind: 'prewarm', message: 'pre-warm on node-1: Pulling, 0/1 images pulled' });
    expect(rowOf(e, 'web-0')?.waits[0]).toEqual({ kind: 'prewarm', message: 'pre-warm on node-0: NotRequested, 0/? images pulled' });
  });

  it('pre-warm: a node whose daemon defers the pull for disk is Deferred, with the reason', () => {
    const image = 'reg.local/web:2';
    const message = 'image filesystem /var/lib/containerd is 83% used, at or above the 80% threshold';
    const e = explain(
      input({
        app: app({ spec: { imagePrewarm: { enabled: true } }, status: { prewarm: { nodesRequested: 1, nodesPulled: 0, nodesFailed: 0 } } }),
        imageLists: [imageList('node-1', [{ image, phase: 'Deferred', message }])],
      }),
    );
    expect(e.prewarm?.nodes.find((n) => n.node === 'node-1')).toMatchObject({ state: 'Deferred', images: [{ image, phase: 'Deferred', message }] });
  });

  it('an unreadable ImageList source and an unreachable queue are notes, not failures', () => {
    const e = explain(
      input({ app: app({ spec: { imagePrewarm: { enabled: true } } }), imageLists: undefined, queue: undefined, notes: ['the queues were not read'] }),
    );
    expect(e.notes).toEqual(['the queues were not read', 'pre-warm progress per node is unknown: the ImageLists could not be read']);
    expect(e.lastReconcile).toBeUndefined();
  });

  it('queues read but holding no reconcile of the App: a note says where to look', () => {
    expect(explain(input({ queue: { timers: [] } })).notes).toEqual([
      "the queues hold no finished reconcile of this App (they keep the newest EBB_QUEUE_REMOVE_ON_COMPLETE jobs; is EBB_QUEUE_PREFIX the watcher's?)",
    ]);
  });

  it('an in-place update in its grace period: the pod waits until the grace period ends', () => {
    const state: InPlaceState = {
      revision: 'web-b',
      startedAt: at(-10),
      oldImageIDs: {},
      oldContainerIDs: {},
      oldRestartCounts: {},
      oldImages: { main: 'reg.local/web:1' },
      newImages: { main: 'reg.local/web:2' },
      resources: {},
      oldResources: {},
      batches: [['main']],
      batch: -1,
      patchedAt: [],
    };
    const updating = pod(1, {
      annotations: { [Annotation.inPlaceUpdateState]: serializeState(state) },
      readinessGates: ['InPlaceUpdateReady'],
      ready: false,
      conditions: [{ type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate' }],
    });
    const inPlace = {
      type: 'RollingUpdate' as const,
      rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' as const, inPlaceUpdateStrategy: { gracePeriodSeconds: 30 } },
    };
    const e = explain(input({ app: app({ spec: { updateStrategy: inPlace } }), pods: [pod(0), updating, pod(2, { revision: 'web-b' })] }));
    expect(rowOf(e, 'web-1')?.waits[0]).toEqual({
      kind: 'inPlace',
      message: 'in-place update started; grace period of 30s before the images are patched',
      until: at(20),
    });
    // The gate is the in-place update's own: not listed again as a readiness wait.
    expect(rowOf(e, 'web-1')?.waits.map((w) => w.kind)).not.toContain('gate');
    expect(e.phase).toBe('rolling update');
  });

  it('readiness: an unscheduled pod, a container pulling, a readiness gate not set, minReadySeconds', () => {
    const e = explain(
      input({
        app: app({ spec: { minReadySeconds: 60 } }),
        pods: [
          pod(0, { revision: 'web-b', node: undefined, ready: false }),
          pod(1, {
            revision: 'web-b',
            ready: false,
            readinessGates: ['example.com/gate'],
            containerStatuses: [
              { name: 'main', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull' } }, lastState: {} },
            ],
          }),
          { ...pod(2, { revision: 'web-b' }), status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at(-15) }] } },
        ],
      }),
    );
    expect(rowOf(e, 'web-0')?.waits).toEqual([{ kind: 'readiness', message: 'not scheduled to a node yet' }]);
    expect(rowOf(e, 'web-1')?.waits).toEqual([
      { kind: 'readiness', message: 'container main: ErrImagePull' },
      { kind: 'gate', message: 'readiness gate example.com/gate: not set' },
    ]);
    expect(rowOf(e, 'web-2')?.waits).toEqual([{ kind: 'availability', message: 'ready; available once ready for minReadySeconds 60', until: at(45) }]);
  });

  it('a partition keeps the pods below it; a terminating pod waits for nothing else', () => {
    const e = explain(
      input({
        app: app({ spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } } }),
        pods: [pod(0), pod(1, { deleting: true }), pod(2, { revision: 'web-b' })],
      }),
    );
    expect(rowOf(e, 'web-0')?.waits).toEqual([{ kind: 'partition', message: 'below the partition (2): stays at the current revision' }]);
    expect(rowOf(e, 'web-1')?.waits).toEqual([{ kind: 'terminating', message: 'terminating since 2026-03-01T11:59:50Z' }]);
    expect(e.pods.map((p) => [p.name, p.revision])).toEqual([
      ['web-2', 'update'],
      ['web-1', 'current'],
      ['web-0', 'current'],
    ]);
  });

  it('the queue: a job running now comes first, then the plan, then timers soonest first', () => {
    const e = explain(
      input({
        plan: { actions: [deleteWeb1] },
        queue: {
          pending: { jobId: 'App.shop.web.0123456789ab', state: 'active', enqueuedAt: NOW.getTime() },
          timers: [
            { reason: 'progress-deadline', dueAt: NOW.getTime() + 600_000 },
            { reason: 'min-ready-seconds', dueAt: NOW.getTime() + 5_000 },
          ],
        },
      }),
    );
    expect(e.next.map((n) => [n.source, n.at ?? 'now', n.what])).toEqual([
      ['queue', 'now', 'a reconcile is running (job App.shop.web.0123456789ab)'],
      ['plan', 'now', 'delete web-1 (recreate it at the update revision)'],
      ['timer', at(5), 'timer min-ready-seconds: a pod becomes available (minReadySeconds)'],
      ['timer', at(600), 'timer progress-deadline: the progress deadline is checked'],
    ]);
  });
});
