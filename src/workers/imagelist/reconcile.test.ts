import { describe, expect, it } from 'vitest';
import { repullSummary } from './reconcile.ts';

const NOW = new Date('2026-11-26T22:00:00.000Z');

describe('repullSummary', () => {
  it('names the re-pulls requested (capped) and when the next one is due', () => {
    const requested = Array.from({ length: 8 }, (_, i) => `registry.example/app:${i}`);
    const said = repullSummary({ apply: [], requested, waitMs: 60_000 }, NOW);
    expect(said.summary).toEqual({
      actions: { applyRepull: 1 },
      repullRequested: 8,
      images: requested.slice(0, 5),
      wait: { reason: 'repull', afterMs: 60_000, until: '2026-11-26T22:01:00.000Z' },
    });
    expect(said.logs).toEqual([`re-pull requested: 8 (${requested.slice(0, 5).join(', ')} and 3 more)`, 'wait: repull until 2026-11-26T22:01:00.000Z']);
  });

  it('says so when nothing was written', () => {
    expect(repullSummary({ apply: undefined, requested: [], waitMs: undefined }, NOW)).toEqual({
      summary: { actions: {}, repullRequested: 0 },
      logs: ['no writes'],
    });
  });
});
