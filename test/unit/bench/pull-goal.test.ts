/**
 * The real-node pull benchmark's goal and the bound one registry bandwidth puts under it, and when the canary
 * side resumes: at its pause step, once every other node's ImageList reports the image Pulled.
 */
import { describe, expect, it } from 'vitest';
import { medianGoal, pullGoal } from '../../../bench/lib/pull-goal.ts';
import { atCanaryPause, notPulled } from '../../../bench/lib/realnode-canary.ts';
import type { App } from '../../../src/api/app.ts';
import type { ImageList } from '../../../src/api/image-list.ts';

describe('pullGoal', () => {
  it('is out of reach when three nodes share one bandwidth and a pull is long beside a step', () => {
    // 3 pods at 2 s each, a 5 s pull alone, 15 s for the three nodes' bytes together.
    const g = pullGoal({ floorMs: 6_000, onePullMs: 5_000, transferMs: 15_000 }, 3);
    expect(g.goalMs).toBeCloseTo(12_100);
    expect(g.boundMs).toBe(17_000);
    expect(g.unreachable).toBe(true);
  });

  it('is within reach when the pull is short beside the steps', () => {
    const g = pullGoal({ floorMs: 30_000, onePullMs: 1_000, transferMs: 3_000 }, 3);
    expect(g.boundMs).toBe(13_000);
    expect(g.unreachable).toBe(false);
  });

  it('is out of reach only when the transfer alone exceeds it (the bound with a step is an estimate)', () => {
    // goal (6 + 5) × 1.1 = 12.1 s; transfer 12 s below it, transfer + one 2 s step above it.
    const g = pullGoal({ floorMs: 6_000, onePullMs: 5_000, transferMs: 12_000 }, 3);
    expect(g.boundMs).toBe(14_000);
    expect(g.unreachable).toBe(false);
  });

  it('takes the medians of the runs and needs a floor', () => {
    const runs = [
      { floorMs: 6_000, onePullMs: 5_000, transferMs: 15_000 },
      { floorMs: 8_000, onePullMs: 7_000, transferMs: 17_000 },
      { floorMs: 7_000, onePullMs: 6_000, transferMs: 16_000 },
    ];
    expect(medianGoal(runs, 2)).toEqual(pullGoal({ floorMs: 7_000, onePullMs: 6_000, transferMs: 16_000 }, 2));
    expect(medianGoal([{ onePullMs: 5_000 }], 3)).toBeUndefined();
  });
});

const list = (phases: Record<string, string>): ImageList => ({
  apiVersion: 'apps.ebb.dev/v1alpha1',
  kind: 'ImageList',
  metadata: { name: 'n' },
  status: { images: Object.entries(phases).map(([image, phase]) => ({ image, phase: phase as 'Pulled' })) },
});

describe('notPulled', () => {
  it('names the nodes whose ImageList does not report the image Pulled, or that have none', () => {
    const lists = new Map([
      ['a', list({ img: 'Pulled' })],
      ['b', list({ img: 'Pulling' })],
      ['c', list({ other: 'Pulled' })],
    ]);
    expect(notPulled(lists, ['a', 'b', 'c', 'd'], 'img')).toEqual(['b', 'c', 'd']);
    expect(notPulled(lists, ['a'], 'img')).toEqual([]);
  });
});

describe('atCanaryPause', () => {
  const app = (paused: boolean, step: number, update = 'r2'): App =>
    ({
      apiVersion: 'apps.ebb.dev/v1alpha1',
      kind: 'App',
      metadata: { name: 'web' },
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused } } },
      status: { currentRevision: 'r1', updateRevision: update, canary: { step } },
    }) as unknown as App;

  it('holds at the pause step of a rollout in progress, paused', () => {
    expect(atCanaryPause(app(true, 1))).toBe(true);
    expect(atCanaryPause(app(false, 1))).toBe(false);
    expect(atCanaryPause(app(true, 0))).toBe(false);
    expect(atCanaryPause(app(true, 1, 'r1'))).toBe(false);
  });
});
