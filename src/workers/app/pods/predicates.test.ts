import { describe, expect, it } from 'vitest';
import { makeApp, podFor } from '../../../../test/unit/app/fixtures.ts';
import { getOrdinal, identityMatches, isRunningAndAvailable, isRunningAndReady, isUnavailable } from './predicates.ts';

describe('getOrdinal', () => {
  it.each([
    ['web', 'web-0', 0],
    ['web', 'web-12', 12],
    ['web', 'web-01', -1],
    ['web', 'web-', -1],
    ['web', 'webx-1', -1],
    ['web', 'web-1-2', -1],
    ['web-1', 'web-1-2', 2],
    ['web', 'web-99999999999', -1],
    ['web', undefined, -1],
  ])('%s / %s → %d', (app, pod, ordinal) => {
    expect(getOrdinal(app, pod)).toBe(ordinal);
  });
});

describe('readiness and availability', () => {
  const app = makeApp();
  const now = new Date('2025-01-01T00:00:10Z');
  it.each([
    ['ready', 0, true, true],
    ['ready', 5, true, true],
    ['ready', 10, true, true],
    ['ready', 11, true, false],
    ['unready', 0, false, false],
    ['pending', 0, false, false],
    ['failed', 0, false, false],
  ] as const)('%s pod, minReadySeconds %d: ready %s, available %s', (state, minReady, ready, available) => {
    const pod = podFor(app, 0, 'r1', state, '2025-01-01T00:00:00Z');
    expect(isRunningAndReady(pod)).toBe(ready);
    expect(isRunningAndAvailable(pod, minReady, now)).toBe(available);
    expect(isUnavailable(pod, minReady, now)).toBe(!available);
  });

  it('a terminating pod and a missing pod are unavailable', () => {
    expect(isUnavailable(podFor(app, 0, 'r1', 'terminating'), 0, now)).toBe(true);
    expect(isUnavailable(undefined, 0, now)).toBe(true);
  });
});

describe('identityMatches', () => {
  const app = makeApp();
  it('holds for a pod built for its ordinal', () => {
    expect(identityMatches(app, podFor(app, 2, 'r1'), 2)).toBe(true);
  });
  it('fails when an identity label was changed', () => {
    const pod = podFor(app, 2, 'r1');
    pod.metadata.labels = { ...pod.metadata.labels, 'apps.kubernetes.io/pod-index': '7' };
    expect(identityMatches(app, pod, 2)).toBe(false);
  });
  it('fails for another ordinal', () => {
    expect(identityMatches(app, podFor(app, 2, 'r1'), 3)).toBe(false);
  });
});
