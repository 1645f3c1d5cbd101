import { describe, expect, it } from 'vitest';
import { answerNamespaces, classifyRoute, filterQueuesAnswer, idNamespace, jobAnswerAllowed, jobNamespace } from './board-scope.ts';

const HEX = '0123456789ab';
const app = (ns: string, name: string) => ({ id: `App.${ns}.${name}.${HEX}`, data: { kind: 'App', namespace: ns, name } });

describe('jobNamespace', () => {
  it.each([
    ['an App reconcile job', app('team-a', 'web'), 'team-a'],
    ['an ImagePullJob reconcile job', { id: `ImagePullJob.ops.warm.${HEX}`, data: { kind: 'ImagePullJob', namespace: 'ops', name: 'warm' } }, 'ops'],
    ['an ImageList job (keyed by node)', { id: `ImageList.node-1.${HEX}`, data: { kind: 'ImageList', namespace: '', name: 'node-1' } }, undefined],
    ['a timer', { id: `App.team-a.web~prewarm.${HEX}`, data: { kind: 'App', namespace: 'team-a', name: 'web', reason: 'prewarm' } }, undefined],
    ['a payload naming another namespace than the id', { id: `App.team-a.web.${HEX}`, data: { kind: 'App', namespace: 'team-b', name: 'web' } }, undefined],
    ['a notification', { id: '17', data: { app: { namespace: 'team-a' } } }, undefined],
    ['no id', { data: { kind: 'App', namespace: 'team-a', name: 'web' } }, undefined],
  ])('%s', (_what, job, want) => {
    expect(jobNamespace(job)).toBe(want);
  });

  it('idNamespace reads the namespace a reconcile job id names, and nothing from other ids', () => {
    expect(idNamespace(`App.team-a.web.${HEX}`)).toBe('team-a');
    expect(idNamespace(`ImagePullJob.ops.warm.${HEX}`)).toBe('ops');
    expect(idNamespace(`ImageList.node-1.${HEX}`)).toBeUndefined();
    expect(idNamespace(`App.team-a.web~prewarm.${HEX}`)).toBeUndefined();
    expect(idNamespace('App.team-a.web')).toBeUndefined();
    expect(idNamespace('repeat:abc')).toBeUndefined();
  });
});

describe('classifyRoute', () => {
  const id = `App.team-a.web.${HEX}`;
  it.each([
    ['GET', '', { kind: 'page' }],
    ['GET', '/', { kind: 'page' }],
    ['GET', '/static/js/main.js', { kind: 'page' }],
    ['GET', '/queue/reconcile/App.team-b.db', { kind: 'page' }],
    ['GET', '/api/queues', { kind: 'queues' }],
    ['GET', '/api/queues/', { kind: 'queues' }],
    ['GET', '/%61pi/queues', { kind: 'queues' }],
    ['HEAD', '/api/queues', { kind: 'queues' }],
    ['GET', `/api/queues/reconcile/${id}`, { kind: 'job', queue: 'reconcile', jobId: id, action: 'read' }],
    ['GET', `/api/queues/shard-1.reconcile/${encodeURIComponent(id)}/logs`, { kind: 'job', queue: 'shard-1.reconcile', jobId: id, action: 'logs' }],
    ['PUT', `/api/queues/reconcile/${id}/retry`, { kind: 'job', queue: 'reconcile', jobId: id, action: 'change' }],
    ['PUT', `/api/queues/reconcile/${id}/clean`, { kind: 'job', queue: 'reconcile', jobId: id, action: 'change' }],
    ['PATCH', `/api/queues/reconcile/${id}/update-data`, { kind: 'job', queue: 'reconcile', jobId: id, action: 'change' }],
    ['GET', '/api/redis/stats', { kind: 'harmless' }],
    ['GET', '/api/queues/reconcile/metrics', { kind: 'harmless' }],
    ['GET', '/api/queues/reconcile/workers', { kind: 'harmless' }],
  ])('%s %s', (method, path, want) => {
    expect(classifyRoute(method, path)).toEqual(want);
  });

  it.each([
    ['PUT', '/api/queues/reconcile/clean/completed'],
    ['PUT', '/api/queues/reconcile/retry/failed'],
    ['PUT', '/api/queues/reconcile/promote'],
    ['PUT', '/api/queues/reconcile/pause'],
    ['PUT', '/api/queues/reconcile/empty'],
    ['PUT', '/api/queues/reconcile/obliterate'],
    ['PUT', '/api/queues/pause'],
    ['PUT', '/api/queues/resume'],
    ['POST', '/api/queues/reconcile/add'],
    ['GET', '/api/job-schedulers'],
    ['GET', `/api/queues/reconcile/${`App.team-a.web.${HEX}`}/flow`],
    ['GET', '/api/queues/reconcile/job-schedulers/x'],
    ['PUT', '/api/queues/reconcile/concurrency'],
    ['POST', '/api/metrics/history/purge'],
    ['DELETE', '/api/queues'],
    ['GET', '/API/queues'],
    ['GET', '/api//queues'],
    ['GET', '/api/queues/reconcile/a%2Fb'],
    ['GET', '/api/queues/reconcile/%E0%A4%A'],
    ['GET', '/api/queues/reconcile/x/y/z'],
  ])('queue-wide or odd: %s %s', (method, path) => {
    expect(classifyRoute(method, path)).toEqual({ kind: 'queueWide' });
  });
});

describe('filtering answers', () => {
  const timer = { id: `App.team-a.web~prewarm.${HEX}`, data: { kind: 'App', namespace: 'team-a', name: 'web' } };
  const node = { id: `ImageList.node-1.${HEX}`, data: { kind: 'ImageList', namespace: '', name: 'node-1' } };
  const body = {
    queues: [
      { name: 'reconcile', counts: { waiting: 4 }, jobs: [app('team-a', 'web'), app('team-b', 'db'), node, app('team-a', 'api')] },
      { name: 'timers', counts: { delayed: 1 }, jobs: [timer] },
    ],
  };

  it('answerNamespaces: the namespaces of the jobs shown', () => {
    expect([...answerNamespaces(body)].sort()).toEqual(['team-a', 'team-b']);
    expect(answerNamespaces({})).toEqual(new Set());
  });

  it('keeps only the allowed namespaces’ jobs; counts stay the queue’s; jobs of no namespace go', () => {
    const out = filterQueuesAnswer(body, new Set(['team-a'])) as typeof body;
    expect(out.queues.map((q) => q.jobs.map((j) => j.id))).toEqual([[`App.team-a.web.${HEX}`, `App.team-a.api.${HEX}`], []]);
    expect(out.queues[0]?.counts).toEqual({ waiting: 4 });
    expect(JSON.stringify(out)).not.toContain('team-b');
    expect(JSON.stringify(filterQueuesAnswer(body, new Set()))).not.toMatch(/team-|node-1/);
    expect(filterQueuesAnswer('nonsense', new Set(['team-a']))).toEqual({ queues: [] });
  });

  it('jobAnswerAllowed: a job detail of an allowed namespace only', () => {
    expect(jobAnswerAllowed({ job: app('team-a', 'web'), status: 'waiting' }, new Set(['team-a']))).toBe(true);
    expect(jobAnswerAllowed({ job: app('team-b', 'db'), status: 'waiting' }, new Set(['team-a']))).toBe(false);
    expect(jobAnswerAllowed({ job: node }, new Set(['team-a', '']))).toBe(false);
    expect(jobAnswerAllowed({ error: { key: 'ERRORS.JOB_NOT_FOUND' } }, new Set(['team-a']))).toBe(false);
  });
});
