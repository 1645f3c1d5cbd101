/**
 * resourceVersions are opaque strings to clients; ebb compares two only when both are decimal integers (as
 * etcd's revisions are, and as upstream's watch cache and KEP-5647 compare them), and otherwise says so.
 */
const DECIMAL = /^(0|[1-9]\d*)$/;

/** -1, 0 or 1 as `a` is older, the same or newer than `b`; undefined when either is not a decimal integer. */
export function compareResourceVersions(a: string | undefined, b: string | undefined): -1 | 0 | 1 | undefined {
  if (a === undefined || b === undefined || !DECIMAL.test(a) || !DECIMAL.test(b)) return undefined;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
