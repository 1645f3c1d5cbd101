import { describe, expect, it } from 'vitest';
import { runtimeProblem } from '../../../src/daemon/daemon.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');

describe('runtimeProblem (the runtime part of /readyz)', () => {
  it.each<[string, { answeredAt: number | undefined; failure: string | undefined }, string | undefined]>([
    ['answered its last Version call just now: ready', { answeredAt: NOW - 1_000, failure: undefined }, undefined],
    ['answered 59 s ago: ready', { answeredAt: NOW - 59_000, failure: undefined }, undefined],
    ['never asked yet: not ready', { answeredAt: undefined, failure: undefined }, 'container runtime has not answered yet'],
    // The last call failed: not ready at once, however recent an earlier answer is.
    [
      'the last call failed a second after an answer: not ready, with the reason',
      { answeredAt: NOW - 1_000, failure: 'CRI Version: No connection established' },
      'container runtime does not answer: CRI Version: No connection established',
    ],
    [
      'no answer for over a minute (a probe that hangs): not ready',
      { answeredAt: NOW - 61_000, failure: undefined },
      'container runtime has not answered recently',
    ],
  ])('%s', (_name, health, problem) => {
    expect(runtimeProblem(health, NOW)).toBe(problem);
  });
});
