import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../api/app-spec.ts';
import { Annotation, ConditionType, EventReason, LIFECYCLE_STATE_LABEL, POD_CONDITION_LIFECYCLE_READY, Reason } from '../../../api/keys.ts';
import type { Lifecycle } from '../../../api/lifecycle.ts';
import type { PodState } from '../../../../test/unit/app/fixtures.ts';
import { world as tableWorld } from '../../../../test/unit/app/plan-table.ts';
import type { Pod, Stored } from '../../../kube/types.ts';
import type { Action } from '../model/actions.ts';
import type { Observed } from '../model/plan.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';

const NOW = new Date('2025-06-01T00:00:00Z');
const SINCE = '2025-05-31T23:58:00Z';
const TRAFFIC = { 'traffic.example/serving': 'yes' };

interface PodSketch {
  ordinal: number;
  rev: 'old' | 'new';
  state?: PodState;
  lifecycle?: string;
  labels?: Record<string, string>;
  finalizers?: string[];
  notReady?: boolean;
}

/** An App at template v2 whose pods are at v1 (`old`) or v2 (`new`), with lifecycle labels and finalizers. */
function world(spec: Partial<AppSpec>, pods: PodSketch[]): Observed {
  const observed = tableWorld(
    spec,
    pods.map((p) => [p.ordinal, p.state ?? 'ready', p.rev]),
  );
  observed.pods.forEach((pod, i) => {
    const p = pods[i];
    if (!p) return;
    pod.metadata.labels = { ...pod.metadata.labels, ...p.labels, ...(p.lifecycle ? { [LIFECYCLE_STATE_LABEL]: p.lifecycle } : {}) };
    if (p.lifecycle) pod.metadata.annotations = { [Annotation.lifecycleSince]: SINCE };
    if (p.finalizers) pod.metadata.finalizers = p.finalizers;
    if (p.notReady)
      pod.status?.conditions?.push({ type: POD_CONDITION_LIFECYCLE_READY, status: 'False', reason: Reason.preparingDelete, lastTransitionTime: SINCE });
  });
  return observed;
}

function summary(actions: Action[]): string[] {
  return actions.flatMap((a) => {
    switch (a.kind) {
      case 'createPod':
        return [`create ${a.pod.metadata.name} ${a.pod.metadata.labels?.[LIFECYCLE_STATE_LABEL] ?? '-'}`];
      case 'deletePod':
        return [`delete ${a.name}`];
      case 'inPlaceStep':
        return [`inPlace ${a.name} ${a.step.kind}`];
      case 'podLifecycle':
        return [`${a.name} → ${a.state}${a.condition ? ` (${a.condition.status})` : ''}`];
      default:
        return [];
    }
  });
}

const preDelete = (extra: object = {}): { lifecycle: Lifecycle } => ({ lifecycle: { preDelete: { labelsHandler: TRAFFIC, ...extra } } });
const inPlace = (lifecycle: Lifecycle, extra: object = {}): Partial<AppSpec> => ({
  lifecycle,
  updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', ...extra } },
});
const paused = { updateStrategy: { type: 'RollingUpdate' as const, rollingUpdate: { paused: true } } };
const ready = (ordinal: number, rev: 'old' | 'new', more: Partial<PodSketch> = {}): PodSketch => ({ ordinal, rev, ...more });

describe('lifecycle hooks in the plan', () => {
  it.each<[string, Partial<AppSpec>, PodSketch[], string[]]>([
    ['no lifecycle: a scale-down deletes at once', { replicas: 1 }, [ready(0, 'new'), ready(1, 'new', { labels: TRAFFIC })], ['delete web-1']],
    [
      'scale-down of a pod preDelete holds: PreparingDelete with the condition False',
      { replicas: 1, ...preDelete({ markPodNotReady: true }) },
      [ready(0, 'new'), ready(1, 'new', { labels: TRAFFIC })],
      ['web-1 → PreparingDelete (False)'],
    ],
    ['scale-down of a pod preDelete does not hold: deleted at once', { replicas: 1, ...preDelete() }, [ready(0, 'new'), ready(1, 'new')], ['delete web-1']],
    [
      'PreparingDelete still held: nothing',
      { replicas: 1, ...preDelete() },
      [ready(0, 'new'), ready(1, 'new', { labels: TRAFFIC, lifecycle: 'PreparingDelete' })],
      [],
    ],
    [
      'PreparingDelete held by a finalizer: nothing',
      { replicas: 1, lifecycle: { preDelete: { finalizersHandler: ['example.com/drain'] } } },
      [ready(0, 'new'), ready(1, 'new', { finalizers: ['example.com/drain'], lifecycle: 'PreparingDelete' })],
      [],
    ],
    [
      'PreparingDelete with its handlers gone: deleted',
      { replicas: 1, ...preDelete() },
      [ready(0, 'new'), ready(1, 'new', { lifecycle: 'PreparingDelete' })],
      ['delete web-1'],
    ],
    [
      'a label with another value does not hold',
      { replicas: 1, ...preDelete() },
      [ready(0, 'new'), ready(1, 'new', { labels: { 'traffic.example/serving': 'no' } })],
      ['delete web-1'],
    ],
    [
      'recreate update of a held pod: PreparingDelete',
      { replicas: 2, ...preDelete() },
      [ready(0, 'old', { labels: TRAFFIC }), ready(1, 'old', { labels: TRAFFIC })],
      ['web-1 → PreparingDelete'],
    ],
    [
      'recreate update, handlers gone: deleted although the pod counts as unavailable (OrderedReady)',
      { replicas: 2, ...preDelete() },
      [ready(0, 'old', { labels: TRAFFIC }), ready(1, 'old', { lifecycle: 'PreparingDelete' })],
      ['delete web-1'],
    ],
    [
      'recreate update paused: a cleared PreparingDelete pod is not deleted',
      { replicas: 2, ...preDelete(), ...paused },
      [ready(0, 'old', { labels: TRAFFIC }), ready(1, 'old', { lifecycle: 'PreparingDelete' })],
      [],
    ],
    [
      'rolled back: a PreparingDelete pod at the update revision returns to service, condition True',
      { replicas: 2, ...preDelete() },
      [ready(0, 'new'), ready(1, 'new', { lifecycle: 'PreparingDelete', notReady: true })],
      ['web-1 → Normal (True)'],
    ],
    [
      'failed pod held by preDelete: PreparingDelete, not replaced yet',
      { replicas: 1, ...preDelete() },
      [ready(0, 'new', { state: 'failed', labels: TRAFFIC })],
      ['web-0 → PreparingDelete'],
    ],
    ['new pods carry their state: Normal', { replicas: 1, ...preDelete() }, [], ['create web-0 Normal']],
    [
      'new pods carry their state: PreparingNormal with preNormal',
      { replicas: 1, lifecycle: { preNormal: { labelsHandler: { 'traffic.example/register': 'pending' } } } },
      [],
      ['create web-0 PreparingNormal'],
    ],
    [
      'in place, held by inPlaceUpdate: PreparingUpdate with the condition False',
      { replicas: 1, ...inPlace({ inPlaceUpdate: { labelsHandler: TRAFFIC, markPodNotReady: true } }) },
      [ready(0, 'old', { labels: TRAFFIC })],
      ['web-0 → PreparingUpdate (False)'],
    ],
    [
      'in place, PreparingUpdate held: nothing',
      { replicas: 1, ...inPlace({ inPlaceUpdate: { labelsHandler: TRAFFIC } }) },
      [ready(0, 'old', { labels: TRAFFIC, lifecycle: 'PreparingUpdate' })],
      [],
    ],
    [
      'in place, PreparingUpdate cleared: Updating',
      { replicas: 1, ...inPlace({ inPlaceUpdate: { labelsHandler: TRAFFIC } }) },
      [ready(0, 'old', { lifecycle: 'PreparingUpdate' })],
      ['web-0 → Updating'],
    ],
    ['in place, not held: Updating first', { replicas: 1, ...inPlace({ inPlaceUpdate: { labelsHandler: TRAFFIC } }) }, [ready(0, 'old')], ['web-0 → Updating']],
    [
      'in place, Updating: the in-place update runs (here one patch: the fixture pod already has the new image)',
      { replicas: 1, ...inPlace({ inPlaceUpdate: { labelsHandler: TRAFFIC } }) },
      [ready(0, 'old', { lifecycle: 'Updating' })],
      ['inPlace web-0 patchSpec'],
    ],
    [
      'in place, Updating but paused: held',
      { replicas: 1, ...inPlace({ inPlaceUpdate: { labelsHandler: TRAFFIC } }, { paused: true }) },
      [ready(0, 'old', { lifecycle: 'Updating' })],
      [],
    ],
    [
      'in place done: back through preNormal',
      { replicas: 1, ...inPlace({ inPlaceUpdate: { labelsHandler: TRAFFIC }, preNormal: { labelsHandler: { 'traffic.example/register': 'pending' } } }) },
      [ready(0, 'new', { lifecycle: 'Updating' })],
      ['web-0 → PreparingNormal'],
    ],
    [
      'in place done, no preNormal: Normal, condition True again',
      { replicas: 1, ...inPlace({ inPlaceUpdate: { labelsHandler: TRAFFIC, markPodNotReady: true } }) },
      [ready(0, 'new', { lifecycle: 'Updating', notReady: true })],
      ['web-0 → Normal (True)'],
    ],
    [
      'PreparingNormal held: nothing',
      { replicas: 1, lifecycle: { preNormal: { labelsHandler: { 'traffic.example/register': 'pending' } } } },
      [ready(0, 'new', { lifecycle: 'PreparingNormal', labels: { 'traffic.example/register': 'pending' } })],
      [],
    ],
    [
      'PreparingNormal cleared: Normal',
      { replicas: 1, lifecycle: { preNormal: { labelsHandler: { 'traffic.example/register': 'pending' } } } },
      [ready(0, 'new', { lifecycle: 'PreparingNormal' })],
      ['web-0 → Normal'],
    ],
    [
      'lifecycle removed from the spec: a waiting pod returns to Normal',
      { replicas: 2 },
      [ready(0, 'new'), ready(1, 'new', { lifecycle: 'PreparingDelete', labels: TRAFFIC })],
      ['web-1 → Normal'],
    ],
  ])('%s', (_name, spec, pods, expected) => {
    expect(summary(planned(world(spec, pods), NOW).actions)).toEqual(expected);
  });

  it('a PreparingUpdate pod held while paused is not started once cleared, and proceeds after resume', () => {
    const spec = inPlace({ inPlaceUpdate: { labelsHandler: TRAFFIC } });
    const pods = [ready(0, 'old', { lifecycle: 'PreparingUpdate' })];
    const held = inPlace({ inPlaceUpdate: { labelsHandler: TRAFFIC } }, { paused: true });
    expect(summary(planned(world(held, pods), NOW).actions)).toEqual([]);
    expect(summary(planned(world(spec, pods), NOW).actions)).toEqual(['web-0 → Updating']);
  });

  it('the PreparingNormal write arms the preNormal handlers', () => {
    const lifecycle: Lifecycle = { preNormal: { labelsHandler: { 'traffic.example/register': 'pending' }, finalizersHandler: ['example.com/register'] } };
    const actions = planned(world(inPlace(lifecycle), [ready(0, 'new', { lifecycle: 'Updating' })]), NOW).actions;
    expect(actions[0]).toMatchObject({
      kind: 'podLifecycle',
      state: 'PreparingNormal',
      labels: { 'traffic.example/register': 'pending' },
      finalizers: ['example.com/register'],
      since: '2025-06-01T00:00:00Z',
    });
  });

  it('reports the waiting pods in LifecycleHookWaiting with how long they waited, an Event, and a timer for the next step', () => {
    const observed = world({ replicas: 1, ...preDelete() }, [ready(0, 'new'), ready(1, 'new', { labels: TRAFFIC, lifecycle: 'PreparingDelete' })]);
    const p = planned(observed, NOW);
    const condition = p.status.conditions?.find((c) => c.type === ConditionType.lifecycleHookWaiting);
    expect(condition).toMatchObject({ status: 'True', reason: Reason.waitingForPreDelete });
    expect(condition?.message).toBe(`1 pod waits for lifecycle hook handlers to be removed: web-1 on preDelete for over 2m (since ${SINCE})`);
    const event = p.actions.find((a) => a.kind === 'event' && a.event.reason === EventReason.lifecycleHookWaiting);
    expect(event).toMatchObject({ event: { type: 'Warning', message: condition?.message } });
    // 2m waited at 2m: the next step (5m) is 3m away.
    expect(p.wait).toEqual({ reason: 'lifecycle-hook', afterMs: 180_000 });

    // The same message again: no second Event; once nobody waits, False and no Event.
    observed.app.status = { ...observed.app.status, conditions: p.status.conditions };
    expect(planned(observed, NOW).actions.filter((a) => a.kind === 'event')).toEqual([]);
    const cleared = { ...observed, pods: observed.pods.map((pod): Stored<Pod> => ({ ...pod, metadata: { ...pod.metadata, labels: { app: 'web' } } })) };
    const after = planned(cleared, NOW);
    expect(after.status.conditions?.find((c) => c.type === ConditionType.lifecycleHookWaiting)).toMatchObject({
      status: 'False',
      reason: Reason.noHookPending,
    });
  });

  it('without spec.lifecycle the status gets no LifecycleHookWaiting condition', () => {
    const p = planned(world({ replicas: 1 }, [ready(0, 'new')]), NOW);
    expect(p.status.conditions?.some((c) => c.type === ConditionType.lifecycleHookWaiting)).toBe(false);
  });
});
