import { describe, expect, it } from 'vitest';
import { KedaScalePlanner, recommend, shippedScaleSpec, type ScaleSpec } from '../../../bench/lib/keda-scale.ts';

const spec: ScaleSpec = { jobsPerWorker: 50, minReplicas: 0, maxReplicas: 10, cooldownMs: 300_000, scaleDownStabilizationMs: 300_000, tolerance: 0.1 };

describe('recommend', () => {
  it('wants ceil(backlog / jobsPerWorker) replicas between 1 and the maximum while active, 0 when inactive', () => {
    expect(recommend(0, 3, spec)).toBe(0);
    expect(recommend(1, 0, spec)).toBe(1);
    expect(recommend(51, 0, spec)).toBe(2);
    expect(recommend(51, 1, spec)).toBe(1); // within the tolerance of 1 × 50
    expect(recommend(300, 0, spec)).toBe(6);
    expect(recommend(5_000, 2, spec)).toBe(10);
  });

  it('keeps the current count within the 10 % tolerance', () => {
    expect(recommend(160, 3, spec)).toBe(3); // 160 / 150 = 1.07
    expect(recommend(170, 3, spec)).toBe(4); // 1.13
  });
});

describe('KedaScalePlanner', () => {
  it('scales up at once and down only to the largest recommendation of the stabilization window', () => {
    const p = new KedaScalePlanner(spec);
    expect(p.next(0, 300, 0)).toBe(6);
    expect(p.next(1_000, 40, 6)).toBe(6);
    expect(p.next(200_000, 120, 6)).toBe(6);
    expect(p.next(301_500, 40, 6)).toBe(3); // the 300 reading left the window; the 120 one (3) has not
    expect(p.next(602_000, 0, 3)).toBe(0); // inactive for the whole cooldown since the last reading above 0
  });

  it('holds one worker through the cooldown while inactive', () => {
    const p = new KedaScalePlanner({ ...spec, scaleDownStabilizationMs: 0 });
    expect(p.next(0, 100, 0)).toBe(2);
    expect(p.next(1_000, 0, 2)).toBe(1);
    expect(p.next(299_000, 0, 1)).toBe(1);
    expect(p.next(301_000, 0, 1)).toBe(0);
  });

  it('follows the backlog without windows when both are 0', () => {
    const p = new KedaScalePlanner({ ...spec, scaleDownStabilizationMs: 0, cooldownMs: 0 });
    expect(p.next(0, 400, 0)).toBe(8);
    expect(p.next(1_000, 100, 8)).toBe(2);
    expect(p.next(2_000, 0, 2)).toBe(0);
  });
});

describe('shippedScaleSpec', () => {
  it('reads jobsPerWorker, the replica bounds and the cooldown of deploy/keda', () => {
    expect(shippedScaleSpec()).toMatchObject({ jobsPerWorker: 1000, minReplicas: 0, maxReplicas: 10, cooldownMs: 300_000 });
  });
});
