import { describe, expect, it } from 'vitest';
import { fnv1a32 } from './hash.ts';

describe('fnv1a32', () => {
  it('gives the published FNV-1a 32-bit values', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });
  it('hashes UTF-8 bytes, not UTF-16 code units', () => {
    expect(fnv1a32('héllo ✓')).toBe(3031106471);
  });
});
