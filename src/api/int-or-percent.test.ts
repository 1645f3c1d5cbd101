import { describe, expect, it } from 'vitest';
import { canaryReplicasOf, maxUnavailableOf, scaledValue } from './int-or-percent.ts';

describe('scaledValue', () => {
  it.each([
    [3, 10, false, 3],
    ['25%', 10, false, 2],
    ['25%', 10, true, 3],
    ['100%', 7, false, 7],
    ['0%', 7, true, 0],
  ] as const)('%j of %d (round up: %s) is %d', (value, total, roundUp, expected) => {
    expect(scaledValue(value, total, roundUp)).toEqual({ ok: true, value: expected });
  });

  it.each([['3'], ['abc'], ['12.5%'], [1.5]])('refuses %j with a reason', (value) => {
    const result = scaledValue(value, 10, false);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.reason).toContain(String(value));
  });
});

describe('maxUnavailableOf', () => {
  it.each([
    [undefined, 5, 1],
    [2, 5, 2],
    ['10%', 5, 1],
    ['50%', 5, 2],
  ] as const)('%j with %d replicas is %d', (value, replicas, expected) => {
    expect(maxUnavailableOf(value, replicas)).toEqual({ ok: true, value: expected });
  });
});

describe('canaryReplicasOf', () => {
  it.each([
    [1, 5, 1],
    ['10%', 5, 1],
    ['50%', 5, 3],
    [9, 5, 5],
  ] as const)('%j with %d replicas is %d', (value, replicas, expected) => {
    expect(canaryReplicasOf(value, replicas)).toEqual({ ok: true, value: expected });
  });
});
