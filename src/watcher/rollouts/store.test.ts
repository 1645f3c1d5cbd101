import { describe, expect, it } from 'vitest';
import { RolloutStore } from './store.ts';

function app(ns: string, name: string, state: 'complete' | 'rolling' | 'aborted' | 'paused') {
  const conditions = state === 'aborted' ? [{ type: 'Aborted', status: 'True' }] : state === 'paused' ? [{ type: 'Paused', status: 'True' }] : [];
  const updateRevision = state === 'complete' ? 'r1' : 'r2';
  return { metadata: { namespace: ns, name }, spec: {}, status: { replicas: 2, updatedReplicas: 2, currentRevision: 'r1', updateRevision, conditions } };
}

function fill(): RolloutStore {
  const s = new RolloutStore();
  s.seen('App a/web', app('a', 'web', 'complete'));
  s.seen('App a/api', app('a', 'api', 'rolling'));
  s.seen('App b/db', app('b', 'db', 'aborted'));
  s.seen('App b/cache', app('b', 'cache', 'paused'));
  return s;
}

describe('RolloutStore', () => {
  it('lists what needs attention first, with counts per state', () => {
    const r = fill().list({ page: 1, pageSize: 10 }, 'all');
    expect(r.items.map((a) => `${a.namespace}/${a.name}`)).toEqual(['b/db', 'b/cache', 'a/api', 'a/web']);
    expect(r.counts).toEqual({ aborted: 1, quarantined: 0, held: 0, paused: 1, rolling: 1, complete: 1 });
    expect(r.namespaces).toEqual(['a', 'b']);
  });

  it('shows a viewer only the namespaces it may see, counts included', () => {
    const r = fill().list({ page: 1, pageSize: 10 }, new Set(['a']));
    expect(r.items.map((a) => a.namespace)).toEqual(['a', 'a']);
    expect(r.counts.aborted).toBe(0);
    expect(r.namespaces).toEqual(['a']);
    // Asking for a namespace it may not see shows nothing of it.
    expect(fill().list({ namespace: 'b', page: 1, pageSize: 10 }, new Set(['a'])).total).toBe(0);
  });

  it('orders again after a change', () => {
    const s = fill();
    expect(s.list({ page: 1, pageSize: 10 }, 'all').items[0]?.name).toBe('db');
    s.seen('App a/web', app('a', 'web', 'aborted'));
    s.seen('App b/db', app('b', 'db', 'complete'));
    expect(s.list({ page: 1, pageSize: 10 }, 'all').items.map((a) => a.name)).toEqual(['web', 'cache', 'api', 'db']);
  });

  it('filters by namespace and state, and pages', () => {
    const s = fill();
    expect(s.list({ namespace: 'b', page: 1, pageSize: 10 }, 'all').items.map((a) => a.name)).toEqual(['db', 'cache']);
    expect(s.list({ state: 'rolling', page: 1, pageSize: 10 }, 'all').items.map((a) => a.name)).toEqual(['api']);
    const p2 = s.list({ page: 2, pageSize: 3 }, 'all');
    expect([p2.page, p2.pages, p2.total, p2.items.map((a) => a.name)]).toEqual([2, 2, 4, ['web']]);
    expect(s.list({ page: 99, pageSize: 3 }, 'all').page).toBe(2);
  });

  it('forgets Apps that are gone or no longer listed, and counts every change', () => {
    const s = fill();
    const v = s.version;
    s.gone('App a/web');
    s.retain((k) => k !== 'App b/db');
    expect(s.size).toBe(2);
    expect(s.version).toBe(v + 2);
    expect(s.get('b', 'cache')?.state).toBe('paused');
  });
});
