/**
 * What quarantine does with one run of a key, from what the run found at its start (pure). A run that died beside
 * others makes its key a suspect: its next run waits to run alone on its worker. Only runs killed while alone
 * count against the key: at `limit` in a row it is held. A hold is retried alone after a delay that doubles with
 * each hold in a row (a retry killed again holds the key again, longer); after `retries` such retries only an
 * operator's release (`ebb queue release`) lets it run. A change to the object does not lift a hold.
 */
import type { QuarantineRecord, QuarantineStart } from '../queue/quarantine.ts';

export interface QuarantinePolicy {
  /** Runs killed while alone, in a row, at which a key is held. */
  limit: number;
  /** The first hold's delay before its retry; each further hold in a row doubles it. */
  retryAfterMs: number;
  /** Holds in a row that are retried by themselves; the next one waits for an operator. */
  retries: number;
}

/** Holds in a row retried by themselves (with the defaults: after 5, 10, 20 and 40 minutes). */
export const QUARANTINE_RETRIES = 4;

export type QuarantineDecision =
  /**
   * Reconcile. `alone`: wait until nothing else runs on this worker and mark the run alone. `retry`: the run is
   * a held key's retry; ending (however) lifts the hold. `withdraw`: an operator released the key; say so.
   */
  | { do: 'run'; alone: boolean; retry: boolean; withdraw: boolean }
  /** Hold the key (newly or again): store the record and report it. */
  | { do: 'hold'; record: QuarantineRecord }
  /** Still held: end at once; come back at `retryInMs` (undefined: only a release lets it run). */
  | { do: 'held'; record: QuarantineRecord; retryInMs: number | undefined };

function hold(start: QuarantineStart, strikes: number, now: Date, p: QuarantinePolicy, since: string): QuarantineDecision {
  const retried = strikes <= p.retries;
  const record: QuarantineRecord = {
    since,
    unfinished: start.unfinished,
    generation: undefined,
    strikes,
    retryAt: retried ? new Date(now.getTime() + p.retryAfterMs * 2 ** (strikes - 1)).toISOString() : undefined,
  };
  return { do: 'hold', record };
}

export function planQuarantine(start: QuarantineStart, now: Date, p: QuarantinePolicy): QuarantineDecision {
  const record = start.record;
  if (record) {
    // A retry (always alone) that never ended: the key took its worker down again.
    if (start.unfinishedAlone > 0) return hold(start, (record.strikes ?? 1) + 1, now, p, record.since);
    if (record.retryAt === undefined) return { do: 'held', record, retryInMs: undefined };
    const due = Date.parse(record.retryAt) - now.getTime();
    if (due > 0) return { do: 'held', record, retryInMs: due };
    return { do: 'run', alone: true, retry: true, withdraw: false };
  }
  if (start.unfinishedAlone >= p.limit) return hold(start, 1, now, p, now.toISOString());
  return { do: 'run', alone: start.unfinished > 0, retry: false, withdraw: start.released };
}
