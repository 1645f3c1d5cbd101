import { describe, expect, it } from 'vitest';
import { formatKey } from '../queue/names.ts';
import { KnownKeys } from './sources.ts';

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
});
