import { describe, expect, it } from 'vitest';
import type { ImageList, ImageStatus } from '../../api/image-list.ts';
import type { ImagePullJob, ImagePullJobSpec, ImagePullJobStatus } from '../../api/image-pull-job.ts';
import { matchesLabels as matchesSelector } from '../../kube/labels.ts';
import { pullJobFieldManager, pullJobLabelKey } from '../../api/pull-job-keys.ts';
import type { ClusterStored, Stored } from '../../kube/types.ts';
import { DEADLINE_WAIT, PROGRESS_POLL_MS, PROGRESS_WAIT, planGone, planPullJob, requestKey, TTL_WAIT, type NodeInfo, type PullJobInput } from './plan.ts';

const IMG = 'registry.example.com/team/app:v2';
const NOW = new Date('2026-01-01T00:10:00Z');
const id = { fieldManager: pullJobFieldManager('ops', 'warm'), labelKey: pullJobLabelKey('ops', 'warm') };

function job(spec: Partial<ImagePullJobSpec> = {}, status?: ImagePullJobStatus): Stored<ImagePullJob> {
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name: 'warm', namespace: 'ops', uid: 'job-uid', resourceVersion: '1', generation: 1 },
    spec: { images: [IMG], ...spec },
    ...(status ? { status } : {}),
  };
}

const node = (name: string, labels: Record<string, string> = { pool: 'gpu' }): NodeInfo => ({ name, labels });

/** An ImageList of `name` that holds the job's entries, with the daemon's reported phase (if any). */
function list(name: string, j: Stored<ImagePullJob>, phase?: ImageStatus['phase'], message?: string): ClusterStored<ImageList> {
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'ImageList',
    metadata: { name, uid: `uid-${name}`, resourceVersion: '1', labels: { [id.labelKey]: requestKey(j) } },
    spec: { images: j.spec.images.map((image) => ({ image })) },
    ...(phase ? { status: { images: [{ image: IMG, phase, ...(message ? { message } : {}) }] } } : {}),
  };
}

const input = (j: Stored<ImagePullJob>, nodes: NodeInfo[], lists: ClusterStored<ImageList>[] = [], now = NOW): PullJobInput => ({
  job: j,
  id,
  nodes,
  lists,
  now,
});
const requested = (p: ReturnType<typeof planPullJob>): string[] => p.actions.flatMap((a) => (a.kind === 'request' ? [a.node] : []));
const cleared = (p: ReturnType<typeof planPullJob>): string[] => p.actions.flatMap((a) => (a.kind === 'clear' ? [a.node] : []));
const cond = (s: ImagePullJobStatus | undefined, type: string) => s?.conditions?.find((c) => c.type === type);

describe('matchesSelector', () => {
  it('selects nodes carrying every selector label; an empty selector selects all', () => {
    expect(matchesSelector({ pool: 'gpu', zone: 'a' }, { pool: 'gpu' })).toBe(true);
    expect(matchesSelector({ pool: 'cpu' }, { pool: 'gpu' })).toBe(false);
    expect(matchesSelector({}, undefined)).toBe(true);
    expect(matchesSelector({ zone: 'a' }, {})).toBe(true);
  });
});

describe('planPullJob', () => {
  it('requests only the selected nodes, and starts the job', () => {
    const j = job({ nodeSelector: { pool: 'gpu' } });
    const p = planPullJob(input(j, [node('a'), node('b'), node('c', { pool: 'cpu' })]));
    expect(requested(p)).toEqual(['a', 'b']);
    expect(p.actions[0]).toMatchObject({ kind: 'request', label: { key: id.labelKey, value: requestKey(j) }, images: [IMG] });
    expect(p.status).toMatchObject({ desired: 2, active: 2, succeeded: 0, failed: 0, startTime: '2026-01-01T00:10:00Z' });
    expect(cond(p.status, 'Complete')).toMatchObject({ status: 'False', reason: 'InProgress' });
    expect(p.events.map((e) => e.reason)).toEqual(['Started']);
    expect(p.deleteJob).toBe(false);
  });

  it('keeps at most `parallelism` nodes in progress', () => {
    const j = job({ parallelism: 2 });
    const nodes = ['a', 'b', 'c', 'd'].map((n) => node(n));
    expect(requested(planPullJob(input(j, nodes)))).toEqual(['a', 'b']);
    const p = planPullJob(input(j, nodes, [list('a', j, 'Pulled'), list('b', j, 'Pulling')]));
    expect(requested(p)).toEqual(['c']);
    expect(p.status).toMatchObject({ desired: 4, active: 2, succeeded: 1 });
    expect(cond(p.status, 'Complete')?.message).toBe('1 of 4 nodes pulled the images, 2 pulling, 1 waiting');
  });

  it('waits for a node its daemon deferred for disk, without holding a parallelism slot', () => {
    const j = job({ parallelism: 1 });
    const nodes = ['a', 'b'].map((n) => node(n));
    const p = planPullJob(input(j, nodes, [list('a', j, 'Deferred', 'image filesystem /var is 83% used')]));
    expect(requested(p)).toEqual(['b']);
    expect(p.status).toMatchObject({ desired: 2, active: 2, succeeded: 0, failed: 0 });
    const all = planPullJob(input(j, nodes, [list('a', j, 'Deferred'), list('b', j, 'Pulled')]));
    expect(all.status?.completionTime).toBeUndefined();
    expect(cond(all.status, 'Complete')).toMatchObject({
      status: 'False',
      message: '1 of 2 nodes pulled the images, 1 pulling (1 deferred by their daemon: image filesystem too full), 0 waiting',
    });
  });

  it('completes once every selected node is done, clears its entries, and names the failed nodes', () => {
    const j = job({ nodeSelector: { pool: 'gpu' } }, { startTime: '2026-01-01T00:00:00Z' });
    const lists = [list('a', j, 'Pulled'), list('b', j, 'Failed', 'registry said 404')];
    const p = planPullJob(input(j, [node('a'), node('b'), node('c', {})], lists));
    expect(requested(p)).toEqual([]);
    expect(cleared(p)).toEqual(['a', 'b']);
    expect(p.status).toMatchObject({ desired: 2, active: 0, succeeded: 1, failed: 1, completionTime: '2026-01-01T00:10:00Z' });
    expect(p.status?.failedNodes).toEqual([{ node: 'b', message: `${IMG}: registry said 404` }]);
    expect(cond(p.status, 'Complete')).toMatchObject({ status: 'True', reason: 'SomeNodesFailed' });
    expect(p.events.map((e) => e.reason)).toEqual(['NodePullFailed', 'Completed']);
  });

  it('leaves out nodes whose NoSchedule or NoExecute taints the job does not tolerate, counts them, and clears their entries', () => {
    const tainted = (name: string, effect: string, key = 'dedicated'): NodeInfo => ({ ...node(name), taints: [{ key, value: 'team-b', effect }] });
    const nodes = [node('a'), tainted('b', 'NoSchedule'), tainted('c', 'NoExecute'), tainted('d', 'PreferNoSchedule'), tainted('e', 'NoSchedule', 'gpu')];
    const j = job({ nodeSelector: { pool: 'gpu' } });
    const p = planPullJob(input(j, nodes, [list('b', j, 'Pulling')]));
    expect(requested(p)).toEqual(['a', 'd']);
    expect(cleared(p), 'entries written on a node the job no longer tolerates are cleared').toEqual(['b']);
    expect(p.status).toMatchObject({ desired: 2, untolerated: 3 });
    expect(cond(p.status, 'Complete')?.message).toBe(
      '0 of 2 nodes pulled the images, 2 pulling, 0 waiting; 3 nodes left out: a NoSchedule or NoExecute taint the job does not tolerate',
    );

    const tolerating = job({ nodeSelector: { pool: 'gpu' }, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'team-b' }] });
    const t = planPullJob(input(tolerating, nodes));
    expect(requested(t)).toEqual(['a', 'b', 'c', 'd']);
    expect(t.status).toMatchObject({ desired: 4, untolerated: 1 });
    const everything = job({ tolerations: [{ operator: 'Exists' }] });
    expect(planPullJob(input(everything, nodes)).status).toMatchObject({ desired: 5, untolerated: 0 });
    const effectOnly = job({ tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] });
    expect(requested(planPullJob(input(effectOnly, nodes)))).toEqual(['a', 'b', 'd']);

    const none = planPullJob(input(j, [tainted('b', 'NoSchedule')]));
    expect(cond(none.status, 'Complete')).toMatchObject({
      status: 'True',
      reason: 'NoNodesSelected',
      message: 'no node matches the nodeSelector; 1 node left out: a NoSchedule or NoExecute taint the job does not tolerate',
    });
  });

  it('completes at once when no node matches', () => {
    const p = planPullJob(input(job({ nodeSelector: { pool: 'none' } }), [node('a')]));
    expect(cond(p.status, 'Complete')).toMatchObject({ status: 'True', reason: 'NoNodesSelected' });
  });

  it('with completionPolicy Never, never completes and requests nodes that join', () => {
    const j = job({ completionPolicy: 'Never' }, { startTime: '2026-01-01T00:00:00Z' });
    const done = planPullJob(input(j, [node('a')], [list('a', j, 'Pulled')]));
    expect(done.actions).toEqual([]);
    expect(cond(done.status, 'Complete')).toMatchObject({ status: 'False', reason: 'NeverCompletes' });
    const joined = planPullJob(input(j, [node('a'), node('z')], [list('a', j, 'Pulled')]));
    expect(requested(joined)).toEqual(['z']);
    expect(joined.status).toMatchObject({ desired: 2, succeeded: 1, active: 1 });
  });

  it('clears nodes that are gone or no longer selected, and entries of another request', () => {
    const j = job({ nodeSelector: { pool: 'gpu' }, completionPolicy: 'Never' }, { startTime: '2026-01-01T00:00:00Z' });
    const old = { ...list('b', j, 'Pulled'), metadata: { ...list('b', j).metadata, labels: { [id.labelKey]: 'deadbeef' } } };
    const p = planPullJob(input(j, [node('b'), node('c', { pool: 'cpu' })], [list('gone', j, 'Pulling'), list('c', j, 'Pulled'), old]));
    expect(cleared(p).sort()).toEqual(['c', 'gone']);
    expect(requested(p)).toEqual(['b']);
    expect(p.status).toMatchObject({ desired: 1, active: 1, succeeded: 0 });
  });

  it('fails the job at activeDeadlineSeconds, clears its entries, and waits for the deadline before', () => {
    const j = job({ activeDeadlineSeconds: 900 }, { startTime: '2026-01-01T00:00:00Z' });
    const before = planPullJob(input(j, [node('a')], [list('a', j, 'Pulling')]));
    expect(before.wait).toEqual({ reason: DEADLINE_WAIT, afterMs: 300_000 });
    const after = planPullJob(input(j, [node('a')], [list('a', j, 'Pulling')], new Date('2026-01-01T00:15:00Z')));
    expect(cleared(after)).toEqual(['a']);
    expect(cond(after.status, 'Failed')).toMatchObject({ status: 'True', reason: 'DeadlineExceeded' });
    expect(after.events.map((e) => e.reason)).toEqual(['DeadlineExceeded']);
  });

  it('after finishing, waits out ttlSecondsAfterFinished, then deletes the job', () => {
    const j = job({ ttlSecondsAfterFinished: 30 });
    const done = planPullJob(input(j, [node('a')], [list('a', j, 'Pulled')]));
    expect(cond(done.status, 'Complete')?.status).toBe('True');
    expect(done.wait).toEqual({ reason: TTL_WAIT, afterMs: 30_000 });
    const finished = { ...j, status: done.status };
    const waiting = planPullJob(input(finished, [node('a')], [], new Date(NOW.getTime() + 10_000)));
    expect(waiting).toMatchObject({ actions: [], status: undefined, deleteJob: false, wait: { reason: TTL_WAIT, afterMs: 20_000 } });
    const expired = planPullJob(input(finished, [node('a')], [], new Date(NOW.getTime() + 30_000)));
    expect(expired.deleteJob).toBe(true);
    expect(expired.events.map((e) => e.reason)).toEqual(['TTLExpired']);
  });

  it('keeps a finished job without a TTL, clearing what is left of its entries', () => {
    const j = job(
      {},
      {
        completionTime: '2026-01-01T00:00:00Z',
        conditions: [{ type: 'Complete', status: 'True', reason: 'AllNodesPulled', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }],
      },
    );
    const p = planPullJob(input(j, [node('a')], [list('a', j, 'Pulled')]));
    expect(p).toMatchObject({ status: undefined, deleteJob: false });
    expect(p.wait).toBeUndefined();
    expect(cleared(p)).toEqual(['a']);
  });

  it('names the first pull secret, in the job namespace, in every request', () => {
    const j = job({ pullSecrets: [{ name: 'regcred' }, { name: 'other' }] });
    const [action] = planPullJob(input(j, [node('a')])).actions;
    expect(action).toMatchObject({ kind: 'request', pullSecret: { namespace: 'ops', name: 'regcred' } });
    expect(requestKey(j)).not.toBe(requestKey(job()));
  });
});

describe('a job whose ImageList events do not reach it (hashed field manager)', () => {
  it('polls while nodes pull, and not once none does', () => {
    const j = job({ completionPolicy: 'Never' }, { startTime: '2026-01-01T00:00:00Z' });
    const unwatched = { ...id, watched: false };
    expect(planPullJob({ ...input(j, [node('a')]), id: unwatched }).wait).toEqual({ reason: PROGRESS_WAIT, afterMs: PROGRESS_POLL_MS });
    expect(planPullJob({ ...input(j, [node('a')]) }).wait).toBeUndefined();
    expect(planPullJob({ ...input(j, [node('a')], [list('a', j, 'Pulled')]), id: unwatched }).wait).toBeUndefined();
  });
});

describe('planGone', () => {
  it('clears every ImageList that holds the entries of a deleted job, by uid', () => {
    const j = job();
    expect(planGone([list('a', j), list('b', j)])).toEqual([
      { kind: 'clear', node: 'a', uid: 'uid-a' },
      { kind: 'clear', node: 'b', uid: 'uid-b' },
    ]);
  });
});
