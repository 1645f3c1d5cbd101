import { describe, expect, it } from 'vitest';
import { RESYNC_PRIORITY } from './enqueue.ts';
import { decayAndAdd, decayed, DEFAULT_FAIRNESS_POLICY, TenantRates, tenantTier, type FairnessPolicy } from './fairness.ts';

const policy: FairnessPolicy = { burst: 64, halfLifeMs: 10_000, maxTier: 20 };

describe('tenantTier', () => {
  it.each<[number, number]>([
    [0, 0],
    [1, 0],
    [64, 0],
    [64.5, 1],
    [128, 2],
    [200, 2],
    [256, 3],
    [10_000, 8],
    [1e12, 20],
    [Number.NaN, 0],
  ])('a namespace with %d recent enqueues gets priority %d', (recent, want) => {
    expect(tenantTier(recent, policy)).toBe(want);
  });

  it('never reaches the resync priority, so background work stays after every change', () => {
    expect(tenantTier(Number.MAX_VALUE)).toBe(DEFAULT_FAIRNESS_POLICY.maxTier);
    expect(DEFAULT_FAIRNESS_POLICY.maxTier).toBeLessThan(RESYNC_PRIORITY);
  });

  it('is monotonic: a busier namespace never runs sooner', () => {
    let last = 0;
    for (let n = 0; n <= 100_000; n += 37) {
      const p = tenantTier(n, policy);
      expect(p).toBeGreaterThanOrEqual(last);
      last = p;
    }
  });
});

describe('decayed counts', () => {
  it('halves every half-life and counts the new enqueue', () => {
    const first = decayAndAdd(undefined, 1000, 10_000);
    expect(first).toEqual({ count: 1, at: 1000 });
    const d = { count: 100, at: 0 };
    expect(decayed(d, 10_000, 10_000)).toBeCloseTo(50);
    expect(decayed(d, 20_000, 10_000)).toBeCloseTo(25);
    expect(decayAndAdd(d, 10_000, 10_000).count).toBeCloseTo(51);
  });

  it('takes a clock that goes back as no time passed', () => {
    expect(decayAndAdd({ count: 10, at: 5000 }, 4000, 10_000)).toEqual({ count: 11, at: 5000 });
  });
});

describe('TenantRates', () => {
  it('lets a quiet namespace keep priority 0 while a flooding one climbs tiers', () => {
    let now = 0;
    const rates = new TenantRates('namespace', policy, () => now);
    const flood = Array.from({ length: 10_000 }, () => rates.priorityFor('a'));
    expect(flood.slice(0, 64).every((p) => p === 0)).toBe(true);
    expect(flood[64]).toBe(1);
    expect(flood.at(-1)).toBe(8);
    // B edits one object at a time, every 100 ms, while A's flood is still recent.
    const quiet = Array.from({ length: 50 }, () => {
      now += 100;
      return rates.priorityFor('b');
    });
    expect(quiet.every((p) => p === 0)).toBe(true);
  });

  it('forgives a namespace once it has been quiet for a few half-lives', () => {
    let now = 0;
    const rates = new TenantRates('namespace', policy, () => now);
    for (let i = 0; i < 1000; i++) rates.priorityFor('a');
    expect(rates.priorityFor('a')).toBeGreaterThan(0);
    now += 5 * policy.halfLifeMs;
    expect(rates.priorityFor('a')).toBe(0);
  });

  it('drops namespaces that decayed to nothing', () => {
    let now = 0;
    const rates = new TenantRates('namespace', policy, () => now);
    for (let i = 0; i < 100; i++) rates.priorityFor(`ns-${i}`);
    expect(rates.size).toBe(100);
    now += 10 * policy.halfLifeMs;
    for (let i = 0; i < 1024; i++) rates.priorityFor('busy');
    expect(rates.size).toBe(1);
  });

  it('gives every change priority 0 (arrival order) when off, and keeps no state', () => {
    const rates = new TenantRates('off', policy, () => 0);
    for (let i = 0; i < 1000; i++) expect(rates.priorityFor('a')).toBe(0);
    expect(rates.size).toBe(0);
  });
});
