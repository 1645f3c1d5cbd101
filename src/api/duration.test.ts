import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.ts';
import { DURATION_PATTERN } from './update-strategy.ts';

describe('parseDuration', () => {
  it.each([
    ['60s', 60_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['1.5m', 90_000],
    ['250ms', 250],
    ['1m0.5s', 60_500],
    ['0s', 0],
  ])('%s is %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
    expect(new RegExp(DURATION_PATTERN).test(input)).toBe(true);
  });

  it.each([[''], ['60'], ['soon'], ['1d'], ['-5s'], ['5 s'], ['.5s']])('rejects %j like the CRD pattern does', (input) => {
    expect(parseDuration(input)).toBeUndefined();
    expect(new RegExp(DURATION_PATTERN).test(input)).toBe(false);
  });
});
