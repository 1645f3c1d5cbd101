import { describe, expect, it } from 'vitest';
import type { CanaryStep } from '../../../api/update-strategy.ts';
import { canaryProgress, type CanaryInput } from './canary.ts';

const steps: CanaryStep[] = [{ replicas: 1 }, { pause: {} }, { replicas: '50%' }, { pause: { duration: '5s' } }];
const now = new Date('2025-01-01T00:01:00.000Z');
const input = (over: Partial<CanaryInput>): CanaryInput => ({
  steps,
  replicas: 4,
  active: true,
  sameRevision: true,
  status: undefined,
  specPaused: false,
  now,
  reached: () => false,
  ...over,
});
const updated = (n: number) => (target: number) => target <= n;

describe('canaryProgress', () => {
  it.each<[string, Partial<CanaryInput>, object]>([
    ['no steps: no canary', { steps: [] }, { status: undefined, target: undefined }],
    ['no rollout: all steps done', { active: false }, { status: { step: 4 }, target: undefined }],
    ['a new revision starts at step 0', { sameRevision: false, status: { step: 3 } }, { status: { step: 0 }, target: 1 }],
    ['step 0 not reached: target 1', { reached: updated(0) }, { status: { step: 0 }, target: 1, pauseSpec: false }],
    [
      'step 0 reached: enters the pause, pauses the spec',
      { reached: updated(1) },
      { status: { step: 1, pausedAt: now.toISOString() }, target: 1, pause: 'manual', pauseSpec: true, enteredManualPause: true },
    ],
    [
      'pause recorded, spec paused: holds',
      { status: { step: 1, pausedAt: 'T' }, specPaused: true, reached: updated(1) },
      { status: { step: 1, pausedAt: 'T' }, pause: 'manual', pauseSpec: false, enteredManualPause: false },
    ],
    [
      'pause recorded, spec already paused by a person: records without patching',
      { status: { step: 1 }, specPaused: true, reached: updated(1) },
      { pauseSpec: false, enteredManualPause: true },
    ],
    ['resumed: step 2 targets 50% = 2', { status: { step: 1, pausedAt: 'T' }, reached: updated(1) }, { status: { step: 2 }, target: 2 }],
    [
      '50% reached: timed pause waits 5 s',
      { status: { step: 2 }, reached: updated(2) },
      { status: { step: 3, pausedAt: now.toISOString() }, target: 2, pause: 'timed', waitMs: 5000 },
    ],
    ['timed pause half over', { status: { step: 3, pausedAt: '2025-01-01T00:00:58.000Z' }, reached: updated(2) }, { pause: 'timed', waitMs: 3000 }],
    ['timed pause over: done', { status: { step: 3, pausedAt: '2025-01-01T00:00:50.000Z' }, reached: updated(2) }, { status: { step: 4 }, target: undefined }],
    ['percentages round up', { replicas: 3, status: { step: 2 }, reached: updated(0) }, { target: 2 }],
  ])('%s', (_name, over, expected) => {
    expect(canaryProgress(input(over))).toMatchObject(expected);
  });
});
