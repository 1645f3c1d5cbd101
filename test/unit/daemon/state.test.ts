import { describe, expect, it } from 'vitest';
import type { ImageListEntry } from '../../../src/api/image-list.ts';
import {
  isNewerRequest,
  markChecked,
  markFailed,
  markPulled,
  markPullStarted,
  newMemory,
  syncEntries,
  timestamp,
  type ImageMemory,
} from '../../../src/daemon/state.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const BACKOFF = { backoffBaseMs: 5_000, backoffMaxMs: 300_000 };

describe('isNewerRequest', () => {
  it.each<[string | undefined, string | undefined, boolean]>([
    [undefined, undefined, false],
    ['2025-06-01T12:00:00Z', undefined, true],
    ['2025-06-01T12:00:01Z', '2025-06-01T12:00:00Z', true],
    ['2025-06-01T12:00:00Z', '2025-06-01T12:00:00Z', false],
    ['2025-06-01T11:00:00Z', '2025-06-01T12:00:00Z', false],
    // Same instant, other notation.
    ['2025-06-01T14:00:00+02:00', '2025-06-01T12:00:00Z', false],
    ['not a time', undefined, false],
  ])('%s after %s: %s', (requested, answered, newer) => {
    expect(isNewerRequest(requested, answered)).toBe(newer);
  });
});

describe('syncEntries', () => {
  it('creates memory for new entries, resuming from the observed status; a pull that was running is Pending again', () => {
    const memory = new Map<string, ImageMemory>();
    const removed = syncEntries(
      memory,
      [{ image: 'a:1' }, { image: 'b:1' }],
      [
        { image: 'a:1', phase: 'Pulled', imageRef: 'sha256:a', attempts: 2, lastPullTime: '2025-06-01T10:00:00Z' },
        { image: 'b:1', phase: 'Pulling', attempts: 1 },
      ],
    );
    expect(removed).toEqual([]);
    expect(memory.get('a:1')).toMatchObject({ status: { phase: 'Pulled', imageRef: 'sha256:a', attempts: 2 }, present: undefined, freshAttempts: true });
    expect(memory.get('b:1')).toMatchObject({ status: { phase: 'Pending', attempts: 1 }, freshAttempts: false });
  });

  it('drops entries no longer in the spec and returns them', () => {
    const memory = new Map<string, ImageMemory>();
    syncEntries(memory, [{ image: 'a:1' }, { image: 'b:1' }], []);
    expect(syncEntries(memory, [{ image: 'b:1' }], [])).toEqual(['a:1']);
    expect([...memory.keys()]).toEqual(['b:1']);
  });

  it('retries a changed entry at once, and a newer pull request starts a new attempts count', () => {
    const memory = new Map<string, ImageMemory>();
    syncEntries(memory, [{ image: 'a:1' }], []);
    const m = memory.get('a:1')!;
    Object.assign(m, { failures: 4, retryAt: NOW + 60_000, freshAttempts: false });
    syncEntries(memory, [{ image: 'a:1' }], []);
    expect(m).toMatchObject({ failures: 4, retryAt: NOW + 60_000 });
    syncEntries(memory, [{ image: 'a:1', pullRequestedAt: '2025-06-01T12:00:00Z' }], []);
    expect(m).toMatchObject({ failures: 0, retryAt: undefined, freshAttempts: true });
    expect(memory.get('a:1')).toBe(m);
  });
});

describe('pull transitions', () => {
  const entry: ImageListEntry = { image: 'a:1', pullRequestedAt: '2025-06-01T11:00:00Z' };

  it('counts attempts until a success, then starts over', () => {
    const m = newMemory(entry, undefined);
    markPullStarted(m, NOW - 9_000);
    expect(m.status).toMatchObject({ phase: 'Pulling', attempts: 1, pullStartTime: timestamp(NOW - 9_000) });
    markFailed(m, { message: 'NotFound: manifest unknown', retryClass: 'transient', pull: true }, NOW, BACKOFF, () => 0);
    expect(m.status).toMatchObject({ phase: 'Failed', attempts: 1, message: 'NotFound: manifest unknown' });
    markPullStarted(m, NOW - 4_250);
    expect(m.status.attempts).toBe(2);
    markPulled(m, 'sha256:x', entry.pullRequestedAt, NOW, NOW - 4_250);
    expect(m.status).toEqual({
      image: 'a:1',
      phase: 'Pulled',
      attempts: 2,
      imageRef: 'sha256:x',
      lastPullTime: timestamp(NOW),
      pullStartTime: timestamp(NOW - 4_250),
      lastPullDurationMillis: 4_250,
      observedPullRequestedAt: entry.pullRequestedAt,
    });
    markPullStarted(m, NOW);
    expect(m.status.attempts).toBe(1);
  });

  it.each<[string, number, boolean, () => number, number]>([
    ['first failure: the base delay', 1, true, () => 1, 5_000],
    ['third failure, no jitter drawn: the base delay', 3, true, () => 0, 5_000],
    ['third failure, full jitter: base × 4', 3, true, () => 1, 20_000],
    ['many failures: capped', 30, true, () => 1, 300_000],
    ['not retryable: the longest backoff', 1, false, () => 0, 300_000],
  ])('backoff, %s', (_name, failures, retryable, random, delay) => {
    const m = newMemory(entry, undefined);
    m.failures = failures - 1;
    markFailed(m, { message: 'x', retryClass: retryable ? 'transient' : 'permanent', pull: true }, NOW, BACKOFF, random);
    expect(m.failures).toBe(failures);
    expect(m.retryAt).toBe(NOW + delay);
  });

  it('a failed lookup keeps the phase and says why', () => {
    const m = newMemory(entry, { image: 'a:1', phase: 'Pulled' });
    markFailed(m, { message: 'container runtime: Unavailable', retryClass: 'transient', pull: false }, NOW, BACKOFF, () => 0);
    expect(m.status).toMatchObject({ phase: 'Pulled', message: 'container runtime: Unavailable' });
    markChecked(m, { present: true, imageRef: 'sha256:x' }, NOW);
    expect(m.status.message).toBeUndefined();
    expect(m).toMatchObject({ failures: 0, retryAt: undefined, present: true, checkedAt: NOW });
  });

  it('an image that was pulled and is gone goes back to Pending', () => {
    const m = newMemory(entry, { image: 'a:1', phase: 'Pulled', imageRef: 'sha256:x' });
    markChecked(m, { present: false }, NOW);
    expect(m.status.phase).toBe('Pending');
    expect(m.status.message).toMatch(/no longer in the container runtime/);
  });

  it('clips long messages to the CRD limit', () => {
    const m = newMemory(entry, undefined);
    markFailed(m, { message: 'x'.repeat(10_000), retryClass: 'transient', pull: true }, NOW, BACKOFF, () => 0);
    expect(m.status.message).toHaveLength(4096);
  });
});
