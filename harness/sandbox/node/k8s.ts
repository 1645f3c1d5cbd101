/**
 * Timestamps as the apiserver writes them on the wire. The object types themselves (Pod, Node, ...) are the
 * product's, in src/kube/types.ts.
 */

/** Formats a time as metav1.Time does on the wire: RFC 3339 with second precision. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Formats a time as metav1.MicroTime (leases): RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
