import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration.ts';

describe('parseDuration', () => {
  it.each([
    ['0', 0],
    ['500ms', 500],
    ['30s', 30_000],
    ['1.5s', 1_500],
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    [' 2m ', 120_000],
  ])('reads %j as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([[''], ['30'], ['-1s'], ['1d'], ['s'], ['1 s'], ['abc']])('rejects %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it.each([
    [0, '0'],
    [500, '500ms'],
    [30_000, '30s'],
    [600_000, '10m'],
    [3_600_000, '1h'],
    [1_500, '1500ms'],
  ])('formats %d ms as %s, which parses back', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });
});
