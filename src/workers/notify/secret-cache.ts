/**
 * The namespace webhook's URL, read from the namespace's Secret at most once per `ttlMs` per namespace: a wave
 * of rollouts in one namespace costs one Secret read, not one per notification. What is kept is the URL, or its
 * absence (no Secret, no key, not readable), each under its own namespace's name only: one namespace's answer
 * never serves another. A Secret created, changed or deleted is seen by deliveries that start at most `ttlMs`
 * after the change. A read that fails (anything but an answer) is not kept, so the next delivery reads again.
 *
 * Bounded: at most `maxEntries` namespaces are kept (the least recently used forgotten first), and a URL longer
 * than `maxUrlChars` is not kept (read at each delivery, as without the cache), so no tenant can make the worker
 * hold more than about `maxEntries × maxUrlChars` characters. Deliveries of one namespace that miss at the same
 * time share one read.
 */

export type UrlReader = (namespace: string, signal: AbortSignal) => Promise<string | undefined>;

export interface SecretCacheOptions {
  /** How long an answer serves; 0: every delivery reads the Secret. */
  ttlMs: number;
  /** Namespaces kept at most. */
  maxEntries: number;
  /** URLs longer than this are read at each delivery instead of kept. */
  maxUrlChars: number;
}

export const SECRET_CACHE_LIMITS = { maxEntries: 1024, maxUrlChars: 2048 } as const;

interface Entry {
  url: string | undefined;
  at: number;
}

/** `read`, answered from memory for `ttlMs` after each answer it gave for a namespace. */
export function cachedUrlReader(read: UrlReader, opts: SecretCacheOptions, now: () => number = Date.now): UrlReader {
  if (opts.ttlMs <= 0) return read;
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<string | undefined>>();

  const keep = (namespace: string, url: string | undefined, at: number): void => {
    entries.delete(namespace);
    if (url !== undefined && url.length > opts.maxUrlChars) return;
    entries.set(namespace, { url, at });
    while (entries.size > opts.maxEntries) {
      const oldest = entries.keys().next().value;
      if (oldest === undefined) break;
      entries.delete(oldest);
    }
  };

  return async (namespace, signal) => {
    const hit = entries.get(namespace);
    if (hit && now() - hit.at < opts.ttlMs) {
      // Most recently used last: the first key is the one to forget.
      entries.delete(namespace);
      entries.set(namespace, hit);
      return hit.url;
    }
    const pending = inFlight.get(namespace);
    if (pending) return pending;
    const startedAt = now();
    const reading = read(namespace, signal)
      .then((url) => {
        // Kept from when the read started: a change made while it ran is seen within ttlMs all the same.
        keep(namespace, url, startedAt);
        return url;
      })
      .finally(() => inFlight.delete(namespace));
    inFlight.set(namespace, reading);
    return reading;
  };
}
