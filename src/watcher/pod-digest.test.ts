import { describe, expect, it } from 'vitest';
import { Annotation } from '../api/keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { podDigest, podEventVerdict, type PodVerdict } from './pod-digest.ts';

type PodStatus = {
  phase?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
  [k: string]: unknown;
};
type TestPod = KubeObject & { spec?: Record<string, unknown>; status?: PodStatus };

const owner = [{ apiVersion: 'apps.ebb.dev/v1alpha1', kind: 'App', name: 'web', uid: 'app-1', controller: true }];
const base: TestPod = {
  metadata: { name: 'web-0', namespace: 'a', uid: 'p1', resourceVersion: '1', labels: { 'apps.ebb.dev/app': 'web' }, ownerReferences: owner },
  spec: { containers: [{ name: 'main', image: 'web:v1' }] },
  status: { phase: 'Pending' },
};
const readyAt = (t: string): PodStatus => ({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: t }] });
const with_ = (p: Partial<TestPod>): TestPod => ({ ...base, ...p, metadata: { ...base.metadata, ...p.metadata } });

describe('podDigest', () => {
  it.each<[string, TestPod]>([
    ['a resourceVersion-only update', with_({ metadata: { resourceVersion: '2' } })],
    [
      'the binding (nodeName) and PodScheduled',
      with_({ spec: { ...base.spec, nodeName: 'n1' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] } }),
    ],
    ['running but not ready', with_({ status: { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'False' }] } })],
    [
      'Initialized and ContainersReady',
      with_({
        status: {
          phase: 'Pending',
          conditions: [
            { type: 'Initialized', status: 'True' },
            { type: 'ContainersReady', status: 'False' },
          ],
        },
      }),
    ],
    [
      'container statuses of a pod not updated in place',
      with_({ status: { phase: 'Pending', containerStatuses: [{ name: 'main', ready: false, restartCount: 0 }] } }),
    ],
  ])('is unchanged by %s', (_, pod) => {
    expect(podDigest(pod)).toBe(podDigest(base));
  });

  it.each<[string, TestPod]>([
    ['becoming Ready', with_({ status: readyAt('t1') })],
    ['failing', with_({ status: { phase: 'Failed' } })],
    ['succeeding', with_({ status: { phase: 'Succeeded' } })],
    ['a label change (revision)', with_({ metadata: { labels: { 'apps.ebb.dev/app': 'web', 'apps.ebb.dev/revision': 'web-2' } } })],
    ['an annotation change', with_({ metadata: { annotations: { x: 'y' } } })],
    ['a new controller', with_({ metadata: { ownerReferences: [] } })],
    ['a finalizer (a lifecycle handler) added', with_({ metadata: { finalizers: ['example.com/drain'] } })],
    ['a specified-delete label', with_({ metadata: { labels: { 'apps.ebb.dev/app': 'web', 'apps.ebb.dev/specified-delete': 'true' } } })],
    [
      'a condition the kubelet does not own (lifecycle-ready, a readiness gate)',
      with_({ status: { phase: 'Pending', conditions: [{ type: 'apps.ebb.dev/lifecycle-ready', status: 'False', reason: 'PreparingDelete' }] } }),
    ],
    [
      'the scheduler failing to place it',
      with_({
        status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'pvc "data-web-0" not found' }] },
      }),
    ],
    ['another pod of the same name', with_({ metadata: { uid: 'p2' } })],
    ['being deleted', with_({ metadata: { deletionTimestamp: 't' } })],
  ])('changes on %s', (_, pod) => {
    expect(podDigest(pod)).not.toBe(podDigest(base));
  });

  it('counts the Ready transition time (minReadySeconds)', () => {
    expect(podDigest(with_({ status: readyAt('t1') }))).not.toBe(podDigest(with_({ status: readyAt('t2') })));
  });

  it('a pod updated in place: its containers and whole status count', () => {
    const annotated = with_({ metadata: { annotations: { [Annotation.inPlaceUpdateState]: '{}' } } });
    const restarted = { ...annotated, status: { phase: 'Pending', containerStatuses: [{ name: 'main', restartCount: 1 }] } };
    const patched = { ...annotated, spec: { containers: [{ name: 'main', image: 'web:v2' }] } };
    expect(podDigest(restarted)).not.toBe(podDigest(annotated));
    expect(podDigest(patched)).not.toBe(podDigest(annotated));
  });

  it('a terminating pod: what is read of it counts as for a live pod (its readiness, phase, labels, finalizers)', () => {
    const deleting = with_({ metadata: { deletionTimestamp: 't' }, status: readyAt('t1') });
    expect(podDigest({ ...deleting, metadata: { ...deleting.metadata, labels: {} } })).not.toBe(podDigest(deleting));
    expect(podDigest(with_({ metadata: { deletionTimestamp: 't' }, status: { phase: 'Running' } }))).not.toBe(podDigest(deleting));
    expect(podDigest(with_({ metadata: { deletionTimestamp: 't' }, status: { phase: 'Succeeded' } }))).not.toBe(podDigest(deleting));
    expect(podDigest({ ...deleting, metadata: { ...deleting.metadata, finalizers: ['example.com/hold'] } })).not.toBe(podDigest(deleting));
    expect(podDigest({ ...deleting, metadata: { ...deleting.metadata, resourceVersion: '9', deletionGracePeriodSeconds: 30 } })).toBe(podDigest(deleting));
  });
});

describe('podEventVerdict', () => {
  const deleted = (p: TestPod): TestPod => ({ ...p, metadata: { ...p.metadata, deletionTimestamp: 't' } });
  const disrupted = (p: TestPod): TestPod => ({
    ...p,
    status: { ...p.status, conditions: [...(p.status?.conditions ?? []), { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }] },
  });
  const pending = podDigest(base);
  const readyPod = with_({ status: readyAt('t1') });
  const ready = podDigest(readyPod);
  const readyDeleting = podDigest(deleted(readyPod));
  const stopped = with_({ status: { phase: 'Succeeded', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: 't2' }] } });

  it.each<[string, string, number | undefined, number, boolean, PodVerdict]>([
    ['a pod gone', 'DELETED', ready, ready, true, 'reconcile'],
    ['an App creating its pod (counted by the status written with it)', 'ADDED', undefined, pending, true, 'drop'],
    ['an orphan appearing (to adopt)', 'ADDED', undefined, pending, false, 'reconcile'],
    ['a pod appearing already Ready', 'ADDED', undefined, ready, true, 'reconcile'],
    ['a pod not seen so far, modified', 'MODIFIED', undefined, pending, true, 'reconcile'],
    ['nothing read changed', 'MODIFIED', pending, pending, true, 'drop'],
    ['Ready', 'MODIFIED', pending, ready, true, 'reconcile'],
    ['DisruptionTarget on a live pod (nothing read changed yet)', 'MODIFIED', ready, podDigest(disrupted(readyPod)), true, 'drop'],
    ["deleted while Ready: an App's own delete looks so (until its status is written)", 'MODIFIED', ready, readyDeleting, true, 'await-status'],
    ['deleted while not Ready', 'MODIFIED', pending, podDigest(deleted(base)), true, 'await-status'],
    [
      "evicted (DisruptionTarget): never an App's own delete",
      'MODIFIED',
      podDigest(disrupted(readyPod)),
      podDigest(deleted(disrupted(readyPod))),
      true,
      'reconcile',
    ],
    [
      'deleted and relabelled at once',
      'MODIFIED',
      ready,
      podDigest(deleted({ ...readyPod, metadata: { ...readyPod.metadata, labels: {} } })),
      true,
      'reconcile',
    ],
    ['a terminating pod no longer Ready', 'MODIFIED', readyDeleting, podDigest(deleted(with_({ status: { phase: 'Running' } }))), true, 'await-removal'],
    ['a terminating pod whose containers stopped', 'MODIFIED', readyDeleting, podDigest(deleted(stopped)), true, 'await-removal'],
    ['a terminating pod, nothing read changed', 'MODIFIED', readyDeleting, readyDeleting, true, 'drop'],
    ['a terminating pod seen first (after a restart of the watch)', 'MODIFIED', undefined, readyDeleting, true, 'reconcile'],
  ])('%s', (...row) => {
    const [, type, before, after, controlled, want] = row;
    expect(podEventVerdict(type, before, after, controlled)).toBe(want);
  });
});
