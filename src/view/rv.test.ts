import { describe, expect, it } from 'vitest';
import { compareResourceVersions } from './rv.ts';

describe('compareResourceVersions', () => {
  it('compares decimal integers by value, past 2^53 too', () => {
    expect(compareResourceVersions('9', '10')).toBe(-1);
    expect(compareResourceVersions('10', '10')).toBe(0);
    expect(compareResourceVersions('90071992547409930', '90071992547409929')).toBe(1);
  });

  it('refuses anything else (opaque versions, leading zeros, absent)', () => {
    expect(compareResourceVersions('abc', '1')).toBeUndefined();
    expect(compareResourceVersions('01', '1')).toBeUndefined();
    expect(compareResourceVersions(undefined, '1')).toBeUndefined();
    expect(compareResourceVersions('1', '')).toBeUndefined();
  });
});
