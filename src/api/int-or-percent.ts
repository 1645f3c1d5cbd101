/**
 * Interpretation of the int-or-percent fields (`maxUnavailable`, canary `replicas`), as upstream's
 * `intstr.GetScaledValueFromIntOrPercent`: an integer is itself; `"N%"` is N percent of `total`, rounded up or
 * down as the caller's field defines.
 */
const PERCENT = /^([0-9]+)%$/;

export type IntOrPercentResult = { ok: true; value: number } | { ok: false; reason: string };

export function scaledValue(value: number | string, total: number, roundUp: boolean): IntOrPercentResult {
  if (typeof value === 'number') {
    return Number.isInteger(value) ? { ok: true, value } : { ok: false, reason: `${value} is not an integer` };
  }
  const m = PERCENT.exec(value);
  if (!m) return { ok: false, reason: `"${value}" is neither an integer nor a percentage` };
  const scaled = (Number(m[1]) * total) / 100;
  return { ok: true, value: roundUp ? Math.ceil(scaled) : Math.floor(scaled) };
}

/** `maxUnavailable` of a rolling update: rounded down, and never below 1 (as the upstream StatefulSet controller). */
export function maxUnavailableOf(value: number | string | undefined, replicas: number): IntOrPercentResult {
  const r = scaledValue(value ?? 1, replicas, false);
  return r.ok ? { ok: true, value: Math.max(1, r.value) } : r;
}

/** The number of updated pods a canary `replicas` step asks for: percentages round up, capped at `replicas`. */
export function canaryReplicasOf(value: number | string, replicas: number): IntOrPercentResult {
  const r = scaledValue(value, replicas, true);
  return r.ok ? { ok: true, value: Math.min(replicas, Math.max(0, r.value)) } : r;
}
