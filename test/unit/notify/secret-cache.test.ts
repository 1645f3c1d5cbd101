/** The namespace webhook's Secret read once per namespace and period: kept per namespace, bounded, and seen again after the period. */
import { describe, expect, it } from 'vitest';
import { cachedUrlReader, type UrlReader } from '../../../src/workers/notify/secret-cache.ts';

const signal = new AbortController().signal;
const opts = { ttlMs: 30_000, maxEntries: 3, maxUrlChars: 64 };

/** A Secret store by namespace (undefined: no Secret), counting the reads made of each namespace. */
function secrets(initial: Record<string, string | undefined>): { store: Record<string, string | undefined>; reads: Map<string, number>; read: UrlReader } {
  const store = { ...initial };
  const reads = new Map<string, number>();
  return {
    store,
    reads,
    read: (ns) => {
      reads.set(ns, (reads.get(ns) ?? 0) + 1);
      return Promise.resolve(store[ns]);
    },
  };
}

describe('the namespace webhook Secret cache', () => {
  it('reads a namespace once per period, its absence too', async () => {
    let now = 0;
    const s = secrets({ a: 'https://a.example/hook' });
    const url = cachedUrlReader(s.read, opts, () => now);
    for (let i = 0; i < 10; i++) {
      expect(await url('a', signal)).toBe('https://a.example/hook');
      expect(await url('b', signal)).toBeUndefined();
      now += 2_000;
    }
    expect(Object.fromEntries(s.reads)).toEqual({ a: 1, b: 1 });
  });

  it('sees a Secret created, changed or deleted once the period has passed since the read, not before', async () => {
    let now = 0;
    const s = secrets({});
    const url = cachedUrlReader(s.read, opts, () => now);
    expect(await url('a', signal)).toBeUndefined();
    s.store['a'] = 'https://a.example/v1';
    now = 29_999;
    expect(await url('a', signal)).toBeUndefined();
    now = 30_000;
    expect(await url('a', signal)).toBe('https://a.example/v1');
    s.store['a'] = 'https://a.example/v2';
    now = 60_000;
    expect(await url('a', signal)).toBe('https://a.example/v2');
    delete s.store['a'];
    now = 90_000;
    expect(await url('a', signal)).toBeUndefined();
    expect(s.reads.get('a')).toBe(4);
  });

  it("never answers a namespace with another's Secret", async () => {
    const s = secrets({ a: 'https://a.example/hook', b: 'https://b.example/hook' });
    const url = cachedUrlReader(s.read, opts, () => 0);
    expect(await url('a', signal)).toBe('https://a.example/hook');
    expect(await url('b', signal)).toBe('https://b.example/hook');
    expect(await url('c', signal)).toBeUndefined();
    expect(await url('a', signal)).toBe('https://a.example/hook');
  });

  it('keeps at most maxEntries namespaces, forgetting the least recently used first', async () => {
    const s = secrets({});
    const url = cachedUrlReader(s.read, opts, () => 0);
    for (const ns of ['n1', 'n2', 'n3']) await url(ns, signal);
    await url('n1', signal); // n1 used again: n2 is now the least recently used
    await url('n4', signal); // over the cap: n2 forgotten, n1 kept
    for (const ns of ['n1', 'n3', 'n2']) await url(ns, signal);
    expect(Object.fromEntries(s.reads)).toEqual({ n1: 1, n2: 2, n3: 1, n4: 1 });
    // A tenant making namespaces without end: the first ones are read again, the cache stays at the cap.
    for (let i = 0; i < 1000; i++) await url(`flood-${i}`, signal);
    await url('n1', signal);
    expect(s.reads.get('n1')).toBe(2);
  });

  it('does not keep a URL longer than maxUrlChars (read again at each delivery)', async () => {
    const long = `https://a.example/${'x'.repeat(64)}`;
    const s = secrets({ a: long });
    const url = cachedUrlReader(s.read, opts, () => 0);
    expect(await url('a', signal)).toBe(long);
    expect(await url('a', signal)).toBe(long);
    expect(s.reads.get('a')).toBe(2);
  });

  it('does not keep a failed read, and shares one read between deliveries that miss at once', async () => {
    let fail = true;
    let reads = 0;
    let release: (() => void) | undefined;
    const read: UrlReader = async () => {
      reads += 1;
      if (fail) throw new Error('apiserver unavailable');
      await new Promise<void>((r) => (release = r));
      return 'https://a.example/hook';
    };
    const url = cachedUrlReader(read, opts, () => 0);
    await expect(url('a', signal)).rejects.toThrow('apiserver unavailable');
    fail = false;
    const both = Promise.all([url('a', signal), url('a', signal)]);
    await new Promise((r) => setImmediate(r));
    release?.();
    expect(await both).toEqual(['https://a.example/hook', 'https://a.example/hook']);
    expect(await url('a', signal)).toBe('https://a.example/hook');
    expect(reads).toBe(2);
  });

  it('reads at each delivery with a period of 0', async () => {
    const s = secrets({ a: 'https://a.example/hook' });
    const url = cachedUrlReader(s.read, { ...opts, ttlMs: 0 }, () => 0);
    for (let i = 0; i < 3; i++) await url('a', signal);
    expect(s.reads.get('a')).toBe(3);
  });
});
