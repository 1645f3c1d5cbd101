import { describe, expect, it } from 'vitest';
import type { QuarantineRecord, QuarantineStart } from '../queue/quarantine.ts';
import { planQuarantine, type QuarantineDecision } from './quarantine-plan.ts';

const now = new Date('2026-01-01T00:00:00Z');
const at = (ms: number): string => new Date(now.getTime() + ms).toISOString();
const policy = { limit: 3, retryAfterMs: 60_000, retries: 2 };
const record = (r: Partial<QuarantineRecord>): QuarantineRecord => ({
  since: '2025-12-31T00:00:00.000Z',
  unfinished: 3,
  generation: 1,
  strikes: 1,
  retryAt: at(1_000),
  ...r,
});
const start = (s: Partial<QuarantineStart>): QuarantineStart => ({ record: undefined, unfinished: 0, unfinishedAlone: 0, released: false, ...s });
const run = (alone: boolean, retry = false, withdraw = false): QuarantineDecision => ({ do: 'run', alone, retry, withdraw });

describe('planQuarantine', () => {
  it.each<[string, Partial<QuarantineStart>, QuarantineDecision]>([
    ['nothing unfinished: runs beside others', {}, run(false)],
    ['an earlier run died beside others: a suspect, run alone', { unfinished: 1 }, run(true)],
    ['many deaths beside others never hold a key', { unfinished: 50 }, run(true)],
    ['runs killed alone below the limit: alone again', { unfinished: 4, unfinishedAlone: 2 }, run(true)],
    [
      'the limit of runs killed alone: held, retried after the first delay',
      { unfinished: 4, unfinishedAlone: 3 },
      { do: 'hold', record: { since: now.toISOString(), unfinished: 4, generation: undefined, strikes: 1, retryAt: at(60_000) } },
    ],
    ['an operator released it: the report is withdrawn', { released: true }, run(false, false, true)],
    ['held, retry not due: ends at once, comes back when due', { record: record({}), unfinished: 0 }, { do: 'held', record: record({}), retryInMs: 1_000 }],
    ['held, retry due: a retry alone', { record: record({ retryAt: at(-1) }) }, run(true, true)],
    ['held, the retry died before it ran alone: retried again', { record: record({ retryAt: at(-1) }), unfinished: 1 }, run(true, true)],
    [
      'held, the retry was killed alone: held again, twice as long',
      { record: record({ retryAt: at(-1) }), unfinished: 1, unfinishedAlone: 1 },
      { do: 'hold', record: { since: '2025-12-31T00:00:00.000Z', unfinished: 1, generation: undefined, strikes: 2, retryAt: at(120_000) } },
    ],
    [
      'past the retries: held until an operator releases it',
      { record: record({ strikes: 2, retryAt: at(-1) }), unfinished: 1, unfinishedAlone: 1 },
      { do: 'hold', record: { since: '2025-12-31T00:00:00.000Z', unfinished: 1, generation: undefined, strikes: 3, retryAt: undefined } },
    ],
    [
      'held without a retry: held, no timer',
      { record: record({ strikes: 3, retryAt: undefined }) },
      { do: 'held', record: record({ strikes: 3, retryAt: undefined }), retryInMs: undefined },
    ],
  ])('%s', (_name, s, expected) => {
    expect(planQuarantine(start(s), now, policy)).toEqual(expected);
  });

  it('a new generation does not lift a hold (the plan never reads one)', () => {
    const held = record({ generation: 1 });
    expect(planQuarantine(start({ record: held }), now, policy)).toMatchObject({ do: 'held' });
  });
});
