import { describe, expect, it } from 'vitest';
import { decodeOverrides, effectiveLimits, encodeOverride, overridesKey } from './overrides.ts';

describe('limit overrides', () => {
  it('round-trips through the stored form', () => {
    const stored = { concurrency: encodeOverride(5), 'rate-limit': encodeOverride({ max: 10, durationMs: 500 }) };
    expect(stored).toEqual({ concurrency: '5', 'rate-limit': '10/500' });
    expect(decodeOverrides(stored)).toEqual({ globalConcurrency: 5, globalRateLimit: { max: 10, durationMs: 500 } });
    expect(decodeOverrides({ concurrency: encodeOverride(null), 'rate-limit': encodeOverride(null) })).toEqual({
      globalConcurrency: null,
      globalRateLimit: null,
    });
  });

  it('ignores fields it cannot read (the configuration applies)', () => {
    expect(decodeOverrides({})).toEqual({});
    expect(decodeOverrides({ concurrency: '0', 'rate-limit': '5' })).toEqual({});
    expect(decodeOverrides({ concurrency: 'x', 'rate-limit': '5/0' })).toEqual({});
  });

  it('wins over the configuration per limit; absent follows it, null removes it', () => {
    const cfg = { globalConcurrency: 8, globalRateLimit: { max: 100, durationMs: 1000 } };
    expect(effectiveLimits(cfg, {})).toEqual(cfg);
    expect(effectiveLimits(cfg, { globalConcurrency: 2 })).toEqual({ ...cfg, globalConcurrency: 2 });
    expect(effectiveLimits(cfg, { globalConcurrency: null, globalRateLimit: null })).toEqual({ globalConcurrency: undefined, globalRateLimit: undefined });
    expect(effectiveLimits({ globalConcurrency: undefined, globalRateLimit: undefined }, { globalRateLimit: { max: 1, durationMs: 10 } })).toEqual({
      globalConcurrency: undefined,
      globalRateLimit: { max: 1, durationMs: 10 },
    });
  });

  it('keeps its key in the queue hash slot', () => {
    expect(overridesKey('{ebb}')).toBe('{ebb}:reconcile:ebb-limits');
  });
});
