import { describe, expect, it } from 'vitest';
import { dedupId, type ObjectKey } from './names.ts';
import { clusterSlot, fnv1a32, forKey, shardOf, shardOfKey, shardPrefix, shardPrefixes, splitEvenly } from './shards.ts';

const app = (name: string, namespace = 'shop'): ObjectKey => ({ kind: 'App', namespace, name });

describe('shardOf', () => {
  it('is FNV-1a 32 (the published test vectors): the shard of an object never changes between versions', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it.each([
    ['App.shop.web', 1, 0],
    ['App.shop.web', 3, fnv1a32('App.shop.web') % 3],
    ['ImageList.node-1', 7, fnv1a32('ImageList.node-1') % 7],
  ])('%s with %i shards is shard %i', (id, shards, shard) => {
    expect(shardOf(id, shards)).toBe(shard);
  });

  it.each([0, -1, 65, 1.5, Number.NaN])('refuses %d shards', (shards) => {
    expect(() => shardOf('App.shop.web', shards)).toThrow(RangeError);
  });

  it('keys an object by its dedup id, so its reconcile jobs and timers share a shard', () => {
    const key = app('web');
    expect(shardOfKey(key, 5)).toBe(shardOf(dedupId(key), 5));
    expect(forKey(['a', 'b', 'c', 'd', 'e'], key)).toBe(['a', 'b', 'c', 'd', 'e'][shardOf(dedupId(key), 5)]);
  });

  it('spreads many objects over every shard, roughly evenly', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3_000; i++) counts[shardOfKey(app(`app-${i}`, `team-${i % 17}`), 3)]! += 1;
    for (const n of counts) expect(n).toBeGreaterThan(900);
  });
});

describe('shardPrefix', () => {
  it.each([
    ['{ebb}', 0, '{ebb}'],
    ['{ebb}', 1, '{ebb-1}'],
    ['{ebb}', 12, '{ebb-12}'],
    ['prod{ebb}x', 2, 'prod{ebb-2}x'],
  ])('%s shard %i is %s', (prefix, shard, expected) => {
    expect(shardPrefix(prefix, shard)).toBe(expected);
  });

  it('keeps one shard exactly the configured prefix and refuses what has no hash tag', () => {
    expect(shardPrefixes('{ebb}', 1)).toEqual(['{ebb}']);
    expect(shardPrefixes('{ebb}', 3)).toEqual(['{ebb}', '{ebb-1}', '{ebb-2}']);
    expect(() => shardPrefix('ebb', 1)).toThrow(RangeError);
    expect(() => shardPrefix('{ebb}', -1)).toThrow(RangeError);
  });
});

describe('splitEvenly', () => {
  it.each([
    [8, 1, [8]],
    [8, 3, [3, 3, 2]],
    [9, 3, [3, 3, 3]],
    [3, 3, [1, 1, 1]],
    [100, 7, [15, 15, 14, 14, 14, 14, 14]],
  ])('%i over %i shards is %j', (total, parts, shares) => {
    expect(splitEvenly(total, parts)).toEqual(shares);
    expect(shares.reduce((a, b) => a + b, 0)).toBe(total);
  });
});

describe('clusterSlot', () => {
  // Values from the Redis Cluster specification and CLUSTER KEYSLOT.
  it.each([
    ['123456789', 0x31c3 % 16384],
    ['foo', 12182],
    ['{user1000}.following', 3443],
    ['{user1000}.followers', 3443],
    ['{ebb}:reconcile:wait', 4407],
    ['{ebb-1}:reconcile:wait', 11762],
    ['{ebb-2}:reconcile:wait', 7569],
  ])('%s is slot %i', (key, slot) => {
    expect(clusterSlot(key)).toBe(slot);
  });

  it('hashes the whole key when the braces hold nothing', () => {
    expect(clusterSlot('foo{}{bar}')).not.toBe(clusterSlot('bar'));
  });
});
