import { describe, expect, it } from 'vitest';
import { BUCKET_REFILL_MS, BUCKET_SIZE, EventGate, OBJECT_INTERVAL_MS, tooLargeEvent } from './too-large-events.ts';
import { supervise } from './supervise.ts';
import { appRef } from '../api/group.ts';
import type { Logger } from '../common/log.ts';

describe('ObjectTooLarge events', () => {
  it('admits one Event per object per interval, and a bounded number per minute over all objects', () => {
    let t = 0;
    const gate = new EventGate(() => t);
    expect(gate.admit('a')).toBe(true);
    expect(gate.admit('a')).toBe(false);
    for (let i = 1; i < BUCKET_SIZE; i++) expect(gate.admit(`o${i}`)).toBe(true);
    expect(gate.admit('one-too-many')).toBe(false);
    t += BUCKET_REFILL_MS;
    expect(gate.admit('one-too-many')).toBe(true);
    expect(gate.admit('a')).toBe(false);
    t += OBJECT_INTERVAL_MS;
    expect(gate.admit('a')).toBe(true);
  });

  it('regards the object, says the limit and that ebb leaves it alone', () => {
    const ev = tooLargeEvent(appRef('ns'), { name: 'fat', namespace: 'ns', uid: 'u', limitBytes: 1024 }, new Date(0), 'w');
    expect(ev).toMatchObject({ reason: 'ObjectTooLarge', type: 'Warning', regarding: { kind: 'App', name: 'fat', namespace: 'ns', uid: 'u' } });
    expect(String(ev?.note)).toContain('1024 bytes');
    expect(String(ev?.note)).toContain('does not reconcile it');
    expect(tooLargeEvent(appRef(), { name: 'node-1', limitBytes: 1 }, new Date(0), 'w')).toBeUndefined();
  });
});

describe('supervise', () => {
  it('restarts a source that throws, and stops when the signal aborts', async () => {
    const ac = new AbortController();
    let runs = 0;
    let failures = 0;
    const log = { error: () => undefined } as unknown as Logger;
    await supervise(
      () => {
        runs++;
        if (runs === 3) ac.abort();
        return Promise.reject(new Error('boom'));
      },
      { signal: ac.signal, log, onFailure: () => failures++, backoff: { baseMs: 1, capMs: 5 } },
    );
    expect(runs).toBe(3);
    expect(failures).toBe(2);
  });
});
