import { describe, expect, it } from 'vitest';
import { formatKey } from '../queue/names.ts';
import { KnownKeys, knownValue } from './sources.ts';

describe('KnownKeys', () => {
  const key = { kind: 'App' as const, namespace: 'a', name: 'web' };
  const other = { kind: 'App' as const, namespace: 'a', name: 'other' };

  it('reports whether a key is new or its fingerprint changed', () => {
    const known = new KnownKeys();
    expect(known.record('apps', key, 1)).toBe(true);
    expect(known.record('apps', key, 1)).toBe(false);
    expect(known.record('apps', key, 2)).toBe(true);
    known.delete('apps', key);
    expect(known.record('apps', key, 2)).toBe(true);
    expect(known.size).toBe(1);
  });

  it('a list replaces what a source knows', () => {
    const known = new KnownKeys();
    known.record('apps', key, 1);
    known.replace('apps', new Map([[formatKey(other), 5]]));
    expect(known.all()).toEqual([formatKey(other)]);
    expect(known.record('apps', other, 5)).toBe(false);
  });

  it('keeps a settled bit next to the fingerprint; a change of it alone is not a change', () => {
    const known = new KnownKeys();
    expect(known.record('apps', key, 0xffffffff, false)).toBe(true);
    expect(known.unsettled()).toEqual([formatKey(key)]);
    expect(known.record('apps', key, 0xffffffff, true)).toBe(false);
    expect(known.unsettled()).toEqual([]);
    expect(known.record('apps', key, 7, true)).toBe(true);
    known.replace('imagelists', new Map([[formatKey(other), knownValue(9, false)]]));
    expect(known.unsettled()).toEqual([formatKey(other)]);
    expect(known.all().sort()).toEqual([formatKey(key), formatKey(other)].sort());
  });

  it('lacks a key only once its source has listed', () => {
    const known = new KnownKeys();
    expect(known.lacks('apps', key), 'a source not listed yet lacks nothing').toBe(false);
    known.replace('apps', new Map([[formatKey(key), 1]]));
    expect(known.lacks('apps', key)).toBe(false);
    expect(known.lacks('apps', other)).toBe(true);
    known.delete('apps', key);
    expect(known.lacks('apps', key)).toBe(true);
    expect(known.lacks('imagelists', key), 'another source').toBe(false);
  });
});
