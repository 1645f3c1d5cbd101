import { describe, expect, it } from 'vitest';
import { RESTART_POLICY, restartPlan, threadEnd, threadResourceLimits } from '../../../src/watcher/worker-thread-plan.ts';

describe("the watcher's worker thread: limits, ends and restarts", () => {
  it('bounds the old space as configured and the young generation as the worker process has it', () => {
    expect(threadResourceLimits(256)).toEqual({ maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 12 });
  });

  it('tells a thread past its heap limit from one that threw or exited', () => {
    expect(threadEnd(Object.assign(new Error('Worker terminated due to reaching memory limit'), { code: 'ERR_WORKER_OUT_OF_MEMORY' }))).toBe('heap-limit');
    expect(threadEnd(new Error('boom'))).toBe('error');
    expect(threadEnd({ code: 'InvalidConfiguration', message: 'invalid configuration' })).toBe('error');
    expect(threadEnd(undefined)).toBe('exit');
  });

  it('backs off exponentially while threads keep ending soon after they start, within the cap', () => {
    const top = (): number => 1;
    let ends = 0;
    const delays: number[] = [];
    for (let i = 0; i < 9; i++) {
      const plan = restartPlan(ends, 500, RESTART_POLICY, top);
      ends = plan.endsInARow;
      delays.push(plan.delayMs);
    }
    expect(ends).toBe(9);
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    // With jitter the delay stays within [base, ceiling].
    const low = restartPlan(5, 500, RESTART_POLICY, () => 0);
    expect(low.delayMs).toBe(1_000);
  });

  it('starts the back-off over after a thread that ran long enough', () => {
    const plan = restartPlan(7, RESTART_POLICY.healthyAfterMs, RESTART_POLICY, () => 1);
    expect(plan).toEqual({ endsInARow: 1, delayMs: 1_000 });
  });
});
