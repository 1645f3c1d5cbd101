/**
 * What others than the App's reconcile do to its pods, as pure functions from a pod to the writes they make:
 * the kubelet (start, ready, lose readiness, restart a container, fail, stop a deleted pod's containers), a
 * person (delete, relabel, patch an image in place, resize), the eviction API (DisruptionTarget, then delete
 * with a long grace period), a finalizer's owner (add one, let go).
 */
import type { Pod, Stored } from '../../../src/kube/types.ts';

export const POD_CHANGES = [
  'start',
  'ready',
  'unready',
  'restart',
  'fail',
  'deleteByPerson',
  'evict',
  'finalizer',
  'kill',
  'finish',
  'relabel',
  'updateInPlace',
  'resize',
] as const;
export type PodChange = (typeof POD_CHANGES)[number];

type PodStatus = NonNullable<Pod['status']>;
type Condition = NonNullable<PodStatus['conditions']>[number];

/** One write: the pod as it is stored next, or 'remove' (the end of its deletion). */
export type PodWrite = Stored<Pod> | 'remove';

interface Ctx {
  now: string;
  pick: number;
}

const withCondition = (conds: readonly Condition[] | undefined, c: Condition): Condition[] => [...(conds ?? []).filter((x) => x.type !== c.type), c];
const ready = (status: boolean, now: string): Condition => ({ type: 'Ready', status: status ? 'True' : 'False', lastTransitionTime: now });
const restartsOf = (pod: Pod): number => pod.status?.containerStatuses?.[0]?.restartCount ?? 0;
const running = (isReady: boolean, restarts: number): PodStatus['containerStatuses'] => [
  { name: 'main', image: 'registry.example/web:v1', imageID: '', ready: isReady, restartCount: restarts, state: { running: {} }, lastState: {} },
];
const isTerminal = (pod: Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
const isTerminating = (pod: Pod): boolean => pod.metadata.deletionTimestamp !== undefined;

function withStatus(pod: Stored<Pod>, status: Partial<PodStatus>): Stored<Pod> {
  return { ...pod, status: { ...pod.status, ...status } };
}

function readiness(pod: Stored<Pod>, isReady: boolean, c: Ctx, restarts = restartsOf(pod)): Stored<Pod> {
  return withStatus(pod, {
    phase: 'Running',
    conditions: withCondition(pod.status?.conditions, ready(isReady, c.now)),
    containerStatuses: running(isReady, restarts),
  });
}

function deleted(pod: Stored<Pod>, c: Ctx, grace: number): Stored<Pod> {
  return { ...pod, metadata: { ...pod.metadata, deletionTimestamp: c.now, deletionGracePeriodSeconds: grace } };
}

function withContainers(pod: Stored<Pod>, change: (c: NonNullable<Pod['spec']>['containers'][number]) => object): Stored<Pod> {
  const spec = pod.spec ?? { containers: [] };
  return { ...pod, spec: { ...spec, containers: spec.containers.map((x) => ({ ...x, ...change(x) })) } };
}

const CHANGES: Record<PodChange, (pod: Stored<Pod>, c: Ctx) => PodWrite[]> = {
  start: (pod, c) => (isTerminal(pod) ? [] : [readiness(pod, false, c)]),
  ready: (pod, c) => (isTerminal(pod) ? [] : [readiness(pod, true, c)]),
  unready: (pod, c) => (pod.status?.phase === 'Running' ? [readiness(pod, false, c)] : []),
  restart: (pod, c) => (pod.status?.phase === 'Running' ? [readiness(pod, false, c, restartsOf(pod) + 1)] : []),
  fail: (pod, c) => (isTerminal(pod) ? [] : [withStatus(pod, { phase: 'Failed', conditions: withCondition(pod.status?.conditions, ready(false, c.now)) })]),
  deleteByPerson: (pod, c) => (isTerminating(pod) ? [] : [deleted(pod, c, 30)]),
  evict: (pod, c) => {
    if (isTerminating(pod)) return [];
    const marked = withStatus(pod, {
      conditions: withCondition(pod.status?.conditions, {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'EvictionByEvictionAPI',
        lastTransitionTime: c.now,
      }),
    });
    return [marked, deleted(marked, c, 3600)];
  },
  finalizer: (pod, c) => [{ ...pod, metadata: { ...pod.metadata, finalizers: [...(pod.metadata.finalizers ?? []), `example.com/hold-${c.pick}`] } }],
  // The kubelet stops the containers of a pod being deleted, then deletes it for good: it is gone at once
  // unless a finalizer holds it.
  kill: (pod, c) => {
    if (!isTerminating(pod) || isTerminal(pod)) return [];
    const stopped = withStatus(pod, {
      phase: 'Succeeded',
      conditions: withCondition(pod.status?.conditions, ready(false, c.now)),
      containerStatuses: [
        {
          name: 'main',
          image: 'registry.example/web:v1',
          imageID: '',
          ready: false,
          restartCount: restartsOf(pod),
          state: { terminated: { exitCode: 0 } },
          lastState: {},
        },
      ],
    });
    return (pod.metadata.finalizers ?? []).length > 0 ? [stopped] : [stopped, 'remove'];
  },
  finish: (pod) => {
    const released = (pod.metadata.finalizers ?? []).length > 0 ? [{ ...pod, metadata: { ...pod.metadata, finalizers: [] } }] : [];
    return isTerminating(pod) ? [...released, 'remove'] : released;
  },
  relabel: (pod, c) => [{ ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, 'example.com/team': `t${c.pick % 3}` } } }],
  updateInPlace: (pod, c) => {
    const patched = withContainers(pod, () => ({ image: `registry.example/web:hot${c.pick % 3}` }));
    return pod.status?.phase === 'Running' ? [patched, readiness(patched, false, c, restartsOf(pod) + 1)] : [patched];
  },
  resize: (pod, c) => [withContainers(pod, () => ({ resources: { requests: { cpu: `${100 + (c.pick % 5) * 50}m` } } }))],
};

/** The writes `change` makes to `pod` at `now` (none when it does not apply to the pod as it is). */
export function podChange(change: PodChange, pod: Stored<Pod>, now: string, pick: number): PodWrite[] {
  return CHANGES[change](structuredClone(pod), { now, pick });
}
