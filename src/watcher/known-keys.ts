import { formatKey, type ObjectKey } from '../queue/names.ts';

/** The bit above a 32-bit fingerprint that marks an object not settled (`appSettled`); 2^33 is still exact. */
const UNSETTLED = 2 ** 32;

/** One number per known key: the metadata fingerprint, plus UNSETTLED when the object was not settled. */
export function knownValue(fingerprint: number, settled: boolean): number {
  return (fingerprint >>> 0) + (settled ? 0 : UNSETTLED);
}

/**
 * The keys of Apps and ImageLists that exist, per source, each with the fingerprint of its metadata
 * (`metaFingerprint`) and whether it was settled when last seen, packed in one number (`knownValue`): the
 * key's `formatKey` form → a number, no objects.
 */
export class KnownKeys {
  private readonly bySource = new Map<string, Map<string, number>>();

  /** What a complete list found (values from `knownValue`); the map is taken over, not copied. */
  replace(source: string, entries: Map<string, number>): void {
    this.bySource.set(source, entries);
  }

  /**
   * Records `key` with `fingerprint` and its settled bit; false when it was known with that same fingerprint
   * already (a change of the settled bit alone is a status change: recorded, not reported).
   */
  record(source: string, key: ObjectKey, fingerprint: number, settled = true): boolean {
    let map = this.bySource.get(source);
    if (!map) this.bySource.set(source, (map = new Map<string, number>()));
    const k = formatKey(key);
    const value = knownValue(fingerprint, settled);
    const before = map.get(k);
    map.set(k, value);
    return before === undefined || before % UNSETTLED !== value % UNSETTLED;
  }

  delete(source: string, key: ObjectKey): void {
    this.bySource.get(source)?.delete(formatKey(key));
  }

  /** Whether `source` has listed (or seen events) and does not hold `key`: the object is gone or never was. */
  lacks(source: string, key: ObjectKey): boolean {
    const map = this.bySource.get(source);
    return map !== undefined && !map.has(formatKey(key));
  }

  all(): string[] {
    return [...this.bySource.values()].flatMap((m) => [...m.keys()]);
  }

  /** The keys last seen not settled, of the sources `source` accepts. */
  unsettledWhere(source: (name: string) => boolean): string[] {
    const keys: string[] = [];
    for (const [name, m] of this.bySource) if (source(name)) for (const [k, v] of m) if (v >= UNSETTLED) keys.push(k);
    return keys;
  }

  /** The keys last seen not settled. */
  unsettled(): string[] {
    const keys: string[] = [];
    for (const m of this.bySource.values()) for (const [k, v] of m) if (v >= UNSETTLED) keys.push(k);
    return keys;
  }

  get size(): number {
    let n = 0;
    for (const m of this.bySource.values()) n += m.size;
    return n;
  }
}
