/** Capped exponential backoff with full jitter: a random delay in [base, min(cap, base * 2^attempt)]. */
export function backoffMs(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(baseMs + random() * Math.max(0, ceiling - baseMs));
}
