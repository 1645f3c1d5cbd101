/**
 * Finished measurements in Redis, one key per measure job id, kept an hour: the measure pool writes one, the
 * App's reconciles read them (one MGET for every due measurement of a plan). A stored value is bounded: a
 * measurement's scalar fields are kept, its texts cut to the status' own limits, and a value read back is
 * checked field by field (a value that is not a measurement ebb could have written counts as absent).
 */
import { MeasurementPhase, type Measurement } from '../../api/analysis.ts';
import type { RedisClient } from '../../queue/connection.ts';

/** How long a result waits for the reconcile that judges it. */
export const RESULT_TTL_S = 3600;
/** The status' bound on a measurement's texts (`value`, `message`). */
export const MAX_RESULT_TEXT = 1024;
/** Fields a stored result may have. */
const MAX_RESULT_FIELDS = 8;
/** No stored result is larger (its texts at their bound, JSON's own characters). */
export const MAX_RESULT_BYTES = 8 * 1024;

const PHASES: ReadonlySet<string> = new Set(Object.values(MeasurementPhase));
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

export const resultKey = (prefix: string, id: string): string => `${prefix}:measured:${id}`;

type Field = string | number | boolean;
const isField = (v: unknown): v is Field => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/**
 * The stored form of `m`: its scalar fields, texts cut to their bound. A result that would still be over
 * MAX_RESULT_BYTES (JSON escapes) is kept as an inconclusive measurement saying so.
 */
export function encodeResult(m: Measurement): string {
  const fields = Object.entries(m as Readonly<Record<string, unknown>>)
    .filter((e): e is [string, Field] => isField(e[1]))
    .slice(0, MAX_RESULT_FIELDS)
    .map(([k, v]) => [k, typeof v === 'string' ? v.slice(0, MAX_RESULT_TEXT) : v]);
  const text = JSON.stringify(Object.fromEntries(fields));
  if (text.length <= MAX_RESULT_BYTES) return text;
  return JSON.stringify({ phase: MeasurementPhase.inconclusive, measuredAt: m.measuredAt, message: 'the measurement was too large to keep' });
}

/** A stored value as a measurement, or undefined when it is not one ebb could have written. */
export function decodeResult(text: string | null | undefined): Measurement | undefined {
  if (typeof text !== 'string' || text.length > MAX_RESULT_BYTES) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const entries = Object.entries(v);
  if (entries.length > MAX_RESULT_FIELDS || !entries.every(([, f]) => isField(f) && (typeof f !== 'string' || f.length <= MAX_RESULT_TEXT))) return undefined;
  const { phase, measuredAt } = v as Record<string, unknown>;
  if (typeof phase !== 'string' || !PHASES.has(phase) || typeof measuredAt !== 'string' || !TIME.test(measuredAt)) return undefined;
  return v as Measurement;
}

export interface ResultStore {
  /** The results of `ids`, in order (undefined: none yet), in one round trip. */
  read(ids: readonly string[]): Promise<(Measurement | undefined)[]>;
  write(id: string, m: Measurement): Promise<void>;
}

export function redisResultStore(client: RedisClient, prefix: string): ResultStore {
  return {
    read: async (ids) => (ids.length === 0 ? [] : (await client.mget(...ids.map((id) => resultKey(prefix, id)))).map(decodeResult)),
    write: async (id, m) => {
      await client.set(resultKey(prefix, id), encodeResult(m), 'EX', RESULT_TTL_S);
    },
  };
}
