/**
 * `spec.reserveOrdinals`: ordinals no pod of the App may hold. Each entry is an ordinal (`5`) or an inclusive
 * range (`"5-7"`); entries may overlap (their union is reserved). The replicas are the first `replicas`
 * ordinals from `ordinals.start` that are not reserved, so reserving an ordinal moves its pod out without
 * renumbering the others.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_ORDINAL } from './app-rules.ts';
import { intOrString } from './schema-kit.ts';

/** Entries one App may list: ranges make long lists unnecessary, and every plan walks them. */
export const MAX_RESERVE_ORDINALS = 256;
const RANGE = /^(0|[1-9][0-9]{0,9})(?:-(0|[1-9][0-9]{0,9}))?$/;
const RANGE_CEL = '^(0|[1-9][0-9]{0,9})(-(0|[1-9][0-9]{0,9}))?$';

const entryRules = [
  {
    rule: `type(self) == int ? (self >= 0 && self <= ${MAX_ORDINAL}) : string(self).matches('${RANGE_CEL}')`,
    message: `each reserved ordinal is an integer from 0 to ${MAX_ORDINAL} or a range "first-last" such as "5-7"`,
  },
  {
    rule: `type(self) == int || !string(self).contains('-') || int(string(self).split('-')[0]) <= int(string(self).split('-')[1])`,
    message: 'a reserved ordinal range "first-last" must not end before it starts',
  },
  {
    rule: `type(self) == int || int(string(self).split('-')[string(self).split('-').size() - 1]) <= ${MAX_ORDINAL}`,
    message: `reserved ordinals are at most ${MAX_ORDINAL}`,
  },
];

export const ReserveOrdinalsSchema = Type.Array(intOrString({ maxLength: 21, 'x-kubernetes-validations': entryRules }), {
  description:
    'Ordinals no pod may hold: integers, or inclusive ranges such as "5-7" (overlaps are merged). A pod at a reserved ordinal is deleted; replicas still counts the pods that run, so the App takes the next free ordinals instead (replicas 4 with [1] runs pods 0, 2, 3 and 4).',
  maxItems: MAX_RESERVE_ORDINALS,
});
export type ReserveOrdinals = Static<typeof ReserveOrdinalsSchema>;

/** Inclusive ranges, sorted and merged (overlapping or adjacent ranges become one). */
export type OrdinalRanges = readonly (readonly [number, number])[];

export type ParsedReserve = { ok: true; ranges: OrdinalRanges } | { ok: false; reason: string };

function parseEntry(entry: number | string): [number, number] | string {
  if (typeof entry === 'number') {
    return Number.isInteger(entry) && entry >= 0 && entry <= MAX_ORDINAL ? [entry, entry] : `${entry} is not an ordinal from 0 to ${MAX_ORDINAL}`;
  }
  const m = RANGE.exec(entry);
  if (!m) return `"${entry}" is neither an ordinal nor a range like "5-7"`;
  const first = Number(m[1]);
  const last = m[2] === undefined ? first : Number(m[2]);
  if (last < first) return `"${entry}" ends before it starts`;
  if (last > MAX_ORDINAL) return `"${entry}" goes past ${MAX_ORDINAL}`;
  return [first, last];
}

/** The union of the entries as sorted, disjoint ranges; a malformed entry (stored before admission checked it) is a reason. */
export function parseReserveOrdinals(entries: readonly (number | string)[] | undefined): ParsedReserve {
  const ranges: [number, number][] = [];
  for (const entry of entries ?? []) {
    const r = parseEntry(entry);
    if (typeof r === 'string') return { ok: false, reason: r };
    ranges.push(r);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [first, last] of ranges) {
    const prev = merged[merged.length - 1];
    if (prev && first <= prev[1] + 1) prev[1] = Math.max(prev[1], last);
    else merged.push([first, last]);
  }
  return { ok: true, ranges: merged };
}

/**
 * The replica ordinals: the first `replicas` ordinals from `start` outside `ranges`, ascending. Walks the
 * ranges rather than every ordinal, so a wide range costs nothing.
 */
export function replicaOrdinals(start: number, replicas: number, ranges: OrdinalRanges): number[] {
  const out: number[] = [];
  let next = start;
  let i = 0;
  while (out.length < replicas) {
    const range = ranges[i];
    if (range && range[1] < next) {
      i++;
      continue;
    }
    if (range && range[0] <= next) {
      next = range[1] + 1;
      i++;
      continue;
    }
    out.push(next++);
  }
  return out;
}

export function isReserved(ranges: OrdinalRanges, ordinal: number): boolean {
  return ranges.some(([first, last]) => ordinal >= first && ordinal <= last);
}
