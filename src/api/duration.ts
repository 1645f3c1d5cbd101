/**
 * Durations as the CRD accepts them (`DURATION_PATTERN`: Go-style, units h, m, s, ms, e.g. `90s`, `1h30m`,
 * `1.5m`), for canary pause steps.
 */
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
const WHOLE = /^(?:[0-9]+(?:\.[0-9]+)?(?:ms|s|m|h))+$/;
const PART = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g;

/** Milliseconds in `input`, rounded to a whole millisecond, or undefined when it is not a valid duration. */
export function parseDuration(input: string): number | undefined {
  if (!WHOLE.test(input)) return undefined;
  let total = 0;
  for (const [, amount, unit] of input.matchAll(PART)) total += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  return Number.isFinite(total) ? Math.round(total) : undefined;
}
