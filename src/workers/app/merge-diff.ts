/** The JSON merge patch (RFC 7386) that turns `before` into `after`: changed keys set, removed keys null. */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function mergeDiff(before: unknown, after: unknown): unknown {
  if (!isObj(before) || !isObj(after)) return after;
  const patch: Obj = {};
  for (const key of Object.keys(before)) if (!(key in after) || after[key] === undefined) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined) continue;
    const old = before[key];
    if (JSON.stringify(old) === JSON.stringify(value)) continue;
    patch[key] = isObj(old) && isObj(value) ? mergeDiff(old, value) : value;
  }
  return patch;
}
