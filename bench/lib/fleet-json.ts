/** The fleet benchmark's saved JSON: request-count Maps as plain objects and back. */
export function replacer(_key: string, value: unknown): unknown {
  return value instanceof Map ? { $map: Object.fromEntries(value as Map<string, number>) } : value;
}

export function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && '$map' in value) return new Map(Object.entries((value as { $map: Record<string, number> }).$map));
  return value;
}
