/** The JSON merge patch (RFC 7386) that turns `before` into `after`: changed keys set, removed keys null. */
import { isRecord } from '../../../common/guards.ts';

type Obj = Record<string, unknown>;

export function mergeDiff(before: unknown, after: unknown): unknown {
  if (!isRecord(before) || !isRecord(after)) return after;
  const patch: Obj = {};
  for (const key of Object.keys(before)) if (!(key in after) || after[key] === undefined) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined) continue;
    const old = before[key];
    if (JSON.stringify(old) === JSON.stringify(value)) continue;
    patch[key] = isRecord(old) && isRecord(value) ? mergeDiff(old, value) : value;
  }
  return patch;
}
