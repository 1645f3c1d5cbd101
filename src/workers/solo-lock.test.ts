import { describe, expect, it } from 'vitest';
import { AbortedError } from '../common/wait.ts';
import { soloLock } from './solo-lock.ts';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const signal = new AbortController().signal;

describe('soloLock', () => {
  it('shares among shared holders; an exclusive one waits for them all and holds back later shared ones', async () => {
    const lock = soloLock();
    const a = await lock.shared(signal);
    const b = await lock.shared(signal);
    const order: string[] = [];
    const solo = lock.exclusive(signal).then((r) => (order.push('solo'), r));
    const late = lock.shared(signal).then((r) => (order.push('late'), r));
    await tick();
    expect(order, 'nothing while two shared runs hold it').toEqual([]);
    a();
    await tick();
    expect(order).toEqual([]);
    b();
    await tick();
    expect(order, 'the exclusive run first, alone').toEqual(['solo']);
    (await solo)();
    await tick();
    expect(order).toEqual(['solo', 'late']);
    (await late)();
  });

  it('a cancelled exclusive waiter lets the shared ones behind it go', async () => {
    const lock = soloLock();
    const a = await lock.shared(signal);
    const ac = new AbortController();
    const solo = lock.exclusive(ac.signal);
    let late = false;
    const shared = lock.shared(signal).then((r) => ((late = true), r));
    await tick();
    expect(late).toBe(false);
    ac.abort();
    await expect(solo).rejects.toBeInstanceOf(AbortedError);
    (await shared)();
    expect(late).toBe(true);
    a();
    // Free again: an exclusive one is granted at once, and releasing twice changes nothing.
    const r = await lock.exclusive(signal);
    r();
    r();
    (await lock.shared(signal))();
  });
});
