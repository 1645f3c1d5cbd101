import { describe, expect, it } from 'vitest';
import type { ImagePullJob } from '../../api/image-pull-job.ts';
import { createLogger } from '../../common/log.ts';
import type { ImageList } from '../../api/image-list.ts';
import type { ClusterStored, Stored } from '../../kube/types.ts';
import type { ReconcileContext } from '../types.ts';
import type { PullJobClient } from './client.ts';
import type { PullBudget, PullBudgetRequest } from '../shared/pull-budget.ts';
import { BUDGET_WAIT, ENTRIES_POLL_MS, type PullJobAction } from './plan.ts';
import { imagePullJobReconciler, PullJobWriteError } from './reconcile.ts';

const key = { kind: 'ImagePullJob' as const, namespace: 'ops', name: 'warm' };
const job: Stored<ImagePullJob> = {
  apiVersion: 'apps.ebb.dev/v1alpha1',
  kind: 'ImagePullJob',
  metadata: { name: 'warm', namespace: 'ops', uid: 'u', resourceVersion: '1', generation: 1 },
  spec: { images: ['a.io/a:1'] },
};

/** A fake client: nodes a, b, c; no ImageLists; the applies to `failOn` fail. Counts every call. */
function fake(current: Stored<ImagePullJob> | undefined, failOn: string[] = [], held: ClusterStored<ImageList>[] = []) {
  const calls = { applied: [] as PullJobAction[], statuses: 0, deleted: 0, events: [] as string[] };
  const client: PullJobClient = {
    get: () => Promise.resolve(current),
    nodes: () => Promise.resolve(['a', 'b', 'c'].map((name) => ({ name, labels: {} }))),
    lists: () => Promise.resolve(held),
    apply: (action) => {
      calls.applied.push(action);
      return failOn.includes(action.node) ? Promise.reject(new Error('apiserver unavailable')) : Promise.resolve();
    },
    writeStatus: () => Promise.resolve(void calls.statuses++),
    deleteJob: () => Promise.resolve(void calls.deleted++),
    record: (_j, e) => Promise.resolve(void calls.events.push(e.reason)),
  };
  return { client, calls };
}

const ctx = {
  rest: undefined,
  log: createLogger('test', 'error'),
  signal: new AbortController().signal,
  now: () => new Date('2026-01-01T00:00:00Z'),
} as unknown as ReconcileContext;

describe('the ImagePullJob reconcile', () => {
  it('requests every selected node, writes the status and the Started event', async () => {
    const { client, calls } = fake(job);
    const out = await imagePullJobReconciler(() => client)(key, ctx);
    expect(calls.applied.map((a) => a.node)).toEqual(['a', 'b', 'c']);
    expect(calls.statuses).toBe(1);
    expect(calls.events).toEqual(['Started']);
    expect(out.summary).toMatchObject({ actions: { request: 3, clear: 0 }, desired: 3, active: 3 });
  });

  it('goes on past a failed ImageList write, writes the status, then fails so the queue retries', async () => {
    const { client, calls } = fake(job, ['a']);
    await expect(imagePullJobReconciler(() => client)(key, ctx)).rejects.toBeInstanceOf(PullJobWriteError);
    expect(calls.applied.map((a) => a.node)).toEqual(['a', 'b', 'c']);
    expect(calls.statuses).toBe(1);
  });

  it('writes no status a second time when nothing changed', async () => {
    let status: ImagePullJob['status'];
    const first = fake(job);
    await imagePullJobReconciler(() => ({ ...first.client, writeStatus: (_j, s) => Promise.resolve(void (status = s)) }))(key, ctx);
    const again = fake({ ...job, status });
    await imagePullJobReconciler(() => again.client)(key, ctx);
    expect(status).toBeDefined();
    expect(again.calls.statuses).toBe(0);
    expect(again.calls.events).toEqual([]);
  });

  it('deletes a finished job once its TTL passed, and clears the ImageLists of a job that is gone', async () => {
    const at = '2025-12-31T23:00:00Z';
    const done = {
      ...job,
      spec: { ...job.spec, ttlSecondsAfterFinished: 60 },
      status: {
        completionTime: at,
        conditions: [{ type: 'Complete', status: 'True' as const, reason: 'AllNodesPulled', message: '', lastTransitionTime: at }],
      },
    };
    const finished = fake(done);
    await imagePullJobReconciler(() => finished.client)(key, ctx);
    expect(finished.calls).toMatchObject({ statuses: 0, deleted: 1, events: ['TTLExpired'] });
    const list: ClusterStored<ImageList> = { apiVersion: 'apps.ebb.dev/v1alpha1', kind: 'ImageList', metadata: { name: 'a', uid: 'ua', resourceVersion: '1' } };
    const gone = fake(undefined, [], [list]);
    const out = await imagePullJobReconciler(() => gone.client)(key, ctx);
    expect(out.summary).toMatchObject({ gone: true, cleared: 1 });
    expect(gone.calls.applied).toEqual([{ kind: 'clear', node: 'a', uid: 'ua' }]);
  });

  it('requests only the nodes the pull budget grants, says why the others wait, and comes back for them', async () => {
    const settled: { holder: string; request: PullBudgetRequest }[] = [];
    const budget: PullBudget = {
      settle: (holder, request) => {
        settled.push({ holder, request });
        return Promise.resolve({ granted: request.want.slice(0, 1), limitedBy: 'namespaceEntries' });
      },
    };
    let status: ImagePullJob['status'];
    const { client, calls } = fake(job);
    const out = await imagePullJobReconciler(() => ({ ...client, writeStatus: (_j, st) => Promise.resolve(void (status = st)) }))(key, {
      ...ctx,
      prewarmBudget: budget,
    });
    expect(calls.applied.map((a) => a.node)).toEqual(['a']);
    expect(settled).toEqual([{ holder: 'ops/ImagePullJob:warm', request: { pulling: [], done: [], kept: [], want: ['a', 'b', 'c'], entriesPerNode: 1 } }]);
    const complete = status?.conditions?.find((c) => c.type === 'Complete');
    expect(complete).toMatchObject({ status: 'False' });
    expect(complete?.message).toContain("1 pulling, 2 waiting (2 wait for room in the namespace's ImageList entries");
    expect(out.wait).toEqual({ reason: BUDGET_WAIT, afterMs: ENTRIES_POLL_MS });
  });

  it('a budget that cannot be asked grants nothing new', async () => {
    const { client, calls } = fake(job);
    const down: PullBudget = { settle: () => Promise.reject(new Error('redis away')) };
    await imagePullJobReconciler(() => client)(key, { ...ctx, prewarmBudget: down });
    expect(calls.applied).toEqual([]);
  });
});
