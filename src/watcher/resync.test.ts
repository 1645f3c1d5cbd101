import { describe, expect, it } from 'vitest';
import { FULL_RESYNC_EVERY, jobObjectKey, resyncIsFull, resyncKeys } from './resync.ts';

describe('resyncIsFull', () => {
  it('is full every FULL_RESYNC_EVERY-th period and light in between', () => {
    const full = Array.from({ length: 2 * FULL_RESYNC_EVERY }, (_, i) => resyncIsFull(i + 1, true));
    expect(full.filter(Boolean)).toHaveLength(2);
    expect(full[FULL_RESYNC_EVERY - 1]).toBe(true);
    expect(full[0]).toBe(false);
  });

  it('is full whenever Redis lost its data (the marker is gone)', () => {
    expect(resyncIsFull(1, false)).toBe(true);
  });
});

describe('jobObjectKey', () => {
  it('maps a reconcile job id to its object key', () => {
    expect(jobObjectKey('App.ns1.web.0a1b2c3d4e5f')).toBe('App ns1/web');
    expect(jobObjectKey('App.ns1.web.v2.0a1b2c3d4e5f')).toBe('App ns1/web.v2');
    expect(jobObjectKey('ImageList.node-1.0a1b2c3d4e5f')).toBe('ImageList node-1');
  });

  it('ignores ids of other forms', () => {
    expect(jobObjectKey('42')).toBeUndefined();
    expect(jobObjectKey('repeat:x.y')).toBeUndefined();
    expect(jobObjectKey('App.ns1')).toBeUndefined();
  });
});

describe('resyncKeys', () => {
  const all = ['App a/x', 'App a/y', 'App b/z', 'ImageList n1'];

  it('a full resync enqueues every known object', () => {
    expect(resyncKeys({ full: true, all, unsettled: [], failedJobIds: [] })).toEqual(all);
  });

  it('a light resync enqueues nothing for a settled fleet without failures', () => {
    expect(resyncKeys({ full: false, all, unsettled: [], failedJobIds: [] })).toEqual([]);
  });

  it('a light resync enqueues the unsettled objects and the known objects whose job failed, once each', () => {
    const keys = resyncKeys({
      full: false,
      all,
      unsettled: ['App a/y'],
      failedJobIds: ['App.a.y.000000000001', 'App.b.z.000000000002', 'App.b.z.000000000003', 'App.gone.q.000000000004', 'bogus'],
    });
    expect(keys.sort()).toEqual(['App a/y', 'App b/z']);
  });
});
