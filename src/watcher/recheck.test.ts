import { describe, expect, it } from 'vitest';
import { recheckDelay } from './recheck.ts';

describe('recheckDelay', () => {
  const base = { now: 1_000_000, activeMs: 1_000, idleMs: 15_000 };

  it('re-checks every second while active, whatever is delayed', () => {
    expect(recheckDelay({ ...base, active: true })).toBe(1_000);
    expect(recheckDelay({ ...base, active: true, growsAt: base.now + 60_000 })).toBe(1_000);
  });

  it('re-checks on the slow idle tick while inactive with nothing delayed', () => {
    expect(recheckDelay({ ...base, active: false })).toBe(15_000);
  });

  it('re-checks when the next delayed job enters the window, if before the idle tick', () => {
    expect(recheckDelay({ ...base, active: false, growsAt: base.now + 4_000 })).toBe(4_000);
    expect(recheckDelay({ ...base, active: false, growsAt: base.now + 60_000 })).toBe(15_000);
  });

  it('never re-checks sooner than the active interval (a due job of a paused queue, a clock step)', () => {
    expect(recheckDelay({ ...base, active: false, growsAt: base.now - 5_000 })).toBe(1_000);
    expect(recheckDelay({ ...base, active: false, growsAt: base.now + 10 })).toBe(1_000);
    expect(recheckDelay({ ...base, active: false, idleMs: 10 })).toBe(1_000);
  });
});
