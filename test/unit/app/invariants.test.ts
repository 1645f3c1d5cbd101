import { describe, expect, it } from 'vitest';
import { BreachLog, checkArmedUnavailable, checkDisruption, InvariantBreachError, type PodView } from './invariants.ts';

const pod = (ordinal: number, over: Partial<PodView> = {}): PodView => ({
  uid: `u-${ordinal}`,
  name: `web-${ordinal}`,
  ordinal,
  revision: 'web-a',
  terminating: false,
  failed: false,
  available: true,
  updating: false,
  images: '["v1"]',
  ...over,
});
const range = { start: 0, end: 4 };

describe('the App’s own maxUnavailable, judged per reconcile', () => {
  it('flags a reconcile that takes a pod out of service beyond the limit', () => {
    const before = [pod(0), pod(1), pod(2, { available: false }), pod(3)];
    const after = [pod(0), pod(1), pod(2, { available: false }), pod(3, { terminating: true, available: false })];
    expect(checkDisruption(before, after, range, 1)).toEqual([
      { invariant: 'maxUnavailable', pod: 'web-3', detail: 'took web-3 out of service, leaving 2 unavailable > maxUnavailable 1' },
    ]);
    expect(checkDisruption(before, after, range, 2)).toEqual([]);
  });

  it('does not judge pods that were unavailable already, nor pods out of range', () => {
    const before = [pod(0), pod(1, { available: false }), pod(2, { available: false }), pod(4)];
    const after = [pod(0), pod(1, { terminating: true, available: false }), pod(2, { available: false })];
    expect(checkDisruption(before, after, range, 1)).toEqual([]);
  });
});

describe('the breach log', () => {
  it('throws the first breach once, and nothing for an allowed invariant', () => {
    const log = new BreachLog();
    log.allow(['partition'], 'injected on purpose');
    log.record({ invariant: 'partition', pod: 'web-0', detail: 'replaced' }, 1);
    expect(() => log.raise()).not.toThrow();
    log.record({ invariant: 'gate', pod: 'web-1', detail: 'gate True' }, 2);
    log.record({ invariant: 'gate', pod: 'web-2', detail: 'gate True' }, 2);
    expect(() => log.raise()).toThrow(InvariantBreachError);
    expect(() => log.raise()).not.toThrow();
    expect(log.breaches.map((b) => b.pod)).toEqual(['web-0', 'web-1', 'web-2']);
  });

  it('refuses an opt-out without a reason', () => {
    expect(() => new BreachLog().allow(['gate'], ' ')).toThrow('needs the invariants and a reason');
  });
});

describe('the armed maxUnavailable, judged per reconcile', () => {
  it('flags a reconcile that makes an available replica unavailable beyond the limit', () => {
    const before = [pod(0), pod(1), pod(2, { available: false }), pod(3)];
    const after = [pod(0), pod(1), pod(2, { available: false }), pod(3, { terminating: true, available: false })];
    expect(checkArmedUnavailable(before, after, range, 1).found).toEqual([
      { invariant: 'maxUnavailable', pod: 'web-2, web-3', detail: '2 unavailable > maxUnavailable 1 (web-2, web-3)' },
    ]);
  });

  it('does not flag replacing pods that were unavailable already, even beyond the limit (a revert healing)', () => {
    const before = [pod(0), pod(1, { available: false }), pod(2, { available: false })];
    const after = [pod(0), pod(1, { terminating: true, available: false }), pod(2, { uid: 'u-2b', available: false })];
    expect(checkArmedUnavailable(before, after, { start: 0, end: 3 }, 1)).toEqual({ unavailable: 2, found: [] });
  });

  it('flags a missing replica that was available before', () => {
    const before = [pod(0), pod(1, { available: false }), pod(2)];
    const after = [pod(0), pod(1, { available: false })];
    expect(checkArmedUnavailable(before, after, { start: 0, end: 3 }, 1).found).toHaveLength(1);
  });
});
