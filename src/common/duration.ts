const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

/**
 * Parses a Go-style duration (`500ms`, `30s`, `10m`, `1h30m`, `1.5s`) into whole milliseconds; `0` is
 * accepted alone. Returns undefined when the text is not a duration (a bare number has no unit and is
 * rejected: `30` could mean seconds or milliseconds).
 */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (t === '0') return 0;
  if (!DURATION.test(t)) return undefined;
  let ms = 0;
  for (const [, value, unit] of t.matchAll(PART)) ms += Number(value) * (UNIT_MS[unit ?? ''] ?? NaN);
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** Formats milliseconds the way parseDuration reads them (for messages and defaults). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  for (const unit of ['h', 'm', 's'] as const) {
    const size = UNIT_MS[unit] ?? 1;
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
