import { describe, expect, it } from 'vitest';
import { InvalidKeyError, dedupId, formatKey, keyFromDedupId, parseKey, timerId, type ObjectKey } from './names.ts';

describe('dedupId', () => {
  it.each<[ObjectKey, string]>([
    [{ kind: 'App', namespace: 'default', name: 'web' }, 'App.default.web'],
    [{ kind: 'App', namespace: 'team-a', name: 'db.primary' }, 'App.team-a.db.primary'],
    [{ kind: 'ImageList', namespace: '', name: 'ip-10-0-0-1.ec2.internal' }, 'ImageList.ip-10-0-0-1.ec2.internal'],
    [{ kind: 'ImagePullJob', namespace: 'ops', name: 'warm.v2' }, 'ImagePullJob.ops.warm.v2'],
  ])('maps %j to %s, without ":" and reversibly', (key, id) => {
    expect(dedupId(key)).toBe(id);
    expect(id).not.toContain(':');
    expect(keyFromDedupId(id)).toEqual(key);
  });

  it.each<[ObjectKey]>([
    [{ kind: 'App', namespace: '', name: 'web' }],
    [{ kind: 'ImagePullJob', namespace: '', name: 'warm' }],
    [{ kind: 'App', namespace: 'a.b', name: 'web' }],
    [{ kind: 'App', namespace: 'ns', name: 'Web' }],
    [{ kind: 'App', namespace: 'ns', name: 'a:b' }],
    [{ kind: 'ImageList', namespace: 'ns', name: 'node-1' }],
    [{ kind: 'Pod' as 'App', namespace: 'ns', name: 'x' }],
  ])('rejects the malformed key %j', (key) => {
    expect(() => dedupId(key)).toThrow(InvalidKeyError);
  });
});

describe('timerId', () => {
  it('appends the reason after a character no Kubernetes name contains', () => {
    const id = timerId({ kind: 'App', namespace: 'ns', name: 'web' }, 'canary-pause');
    expect(id).toBe('App.ns.web~canary-pause');
    expect(id).not.toContain(':');
  });

  it.each([[''], ['Upper'], ['a:b'], ['x'.repeat(64)]])('rejects the reason %j', (reason) => {
    expect(() => timerId({ kind: 'App', namespace: 'ns', name: 'web' }, reason)).toThrow(InvalidKeyError);
  });
});

describe('formatKey', () => {
  it.each<[ObjectKey, string]>([
    [{ kind: 'App', namespace: 'default', name: 'web' }, 'App default/web'],
    [{ kind: 'App', namespace: 'team-a', name: 'db.primary' }, 'App team-a/db.primary'],
    [{ kind: 'ImageList', namespace: '', name: 'ip-10-0-0-1.ec2.internal' }, 'ImageList ip-10-0-0-1.ec2.internal'],
    [{ kind: 'ImagePullJob', namespace: 'ops', name: 'warm' }, 'ImagePullJob ops/warm'],
  ])('writes %j as %s, and parseKey reads it back', (key, text) => {
    expect(formatKey(key)).toBe(text);
    expect(parseKey(text)).toEqual(key);
  });

  it.each(['', 'App', 'App web', 'Pod ns/web', ' ns/web'])('parseKey refuses %j', (text) => {
    expect(() => parseKey(text)).toThrow(InvalidKeyError);
  });
});
