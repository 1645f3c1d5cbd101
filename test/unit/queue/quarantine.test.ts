import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.ts';
import { formatKey, type ObjectKey } from '../../../src/queue/names.ts';
import { redisQuarantine, type QuarantineRecord, type QuarantineStore } from '../../../src/queue/quarantine.ts';
import { withQuarantine, type QuarantineHooks } from '../../../src/workers/quarantine.ts';
import type { ReconcileContext, Reconciler } from '../../../src/workers/types.ts';
import { useRedis } from './support.ts';

const key: ObjectKey = { kind: 'App', namespace: 'ns', name: 'web' };
const ctx: ReconcileContext = {
  rest: undefined as never,
  log: createLogger('test', 'silent'),
  signal: new AbortController().signal,
  now: () => new Date('2026-01-01T00:00:00Z'),
};

describe('the quarantine store on a real Redis', () => {
  const redis = useRedis();

  it('counts runs that never ended, clears them when one ends, holds and releases', async () => {
    const store = redisQuarantine(redis.connection(false), redis.config().prefix);
    const id = formatKey(key);
    expect(await store.started(id)).toBe(0);
    expect(await store.started(id)).toBe(1);
    expect(await store.started(id)).toBe(2);
    await store.ended(id);
    expect(await store.started(id)).toBe(0);
    const record: QuarantineRecord = { since: '2026-01-01T00:00:00.000Z', unfinished: 3, generation: 4 };
    await store.hold(id, record);
    expect(await store.get(id)).toEqual(record);
    expect([...(await store.list())]).toEqual([[id, record]]);
    expect(await store.release(id)).toBe(true);
    expect(await store.get(id)).toBeUndefined();
    expect(await store.release(id)).toBe(false);
    expect(await store.started(id), 'release also forgets unfinished runs').toBe(0);
  });

  it('reads the hold and counts the run started in one round trip', async () => {
    const store = redisQuarantine(redis.connection(false), redis.config().prefix);
    const id = formatKey(key);
    expect(await store.begin(id)).toEqual({ record: undefined, unfinished: 0 });
    expect(await store.begin(id)).toEqual({ record: undefined, unfinished: 1 });
    const record: QuarantineRecord = { since: '2026-01-01T00:00:00.000Z', unfinished: 2, generation: 7 };
    await store.hold(id, record);
    expect(await store.begin(id)).toEqual({ record, unfinished: 2 });
  });
});

/** An in-memory store with the same semantics, for the wrapper's rules. */
function memoryStore(): QuarantineStore & { failing: boolean } {
  const inflight = new Map<string, number>();
  const held = new Map<string, QuarantineRecord>();
  const s = {
    failing: false,
    started: (k: string) => (s.failing ? Promise.reject(new Error('redis away')) : Promise.resolve(((n) => (inflight.set(k, n + 1), n))(inflight.get(k) ?? 0))),
    ended: (k: string) => Promise.resolve(void inflight.delete(k)),
    get: (k: string) => (s.failing ? Promise.reject(new Error('redis away')) : Promise.resolve(held.get(k))),
    hold: (k: string, r: QuarantineRecord) => Promise.resolve(void held.set(k, r)),
    release: (k: string) => Promise.resolve(held.delete(k) && inflight.delete(k) !== undefined),
    list: () => Promise.resolve(new Map(held)),
    begin: async (k: string) => ({ record: await s.get(k), unfinished: await s.started(k) }),
  };
  return s;
}

describe('withQuarantine', () => {
  function setup(limit = 3) {
    const store = memoryStore();
    let generation = 1;
    const reports: QuarantineRecord[] = [];
    let cleared = 0;
    const hooks: QuarantineHooks = {
      generation: () => Promise.resolve(generation),
      report: (_k, _c, r) => Promise.resolve(void reports.push(r)),
      clear: () => Promise.resolve(void cleared++),
    };
    let runs = 0;
    let crash = true;
    // A "crash": the run starts and never ends, as when its worker dies.
    const inner: Reconciler = () => {
      runs++;
      return crash ? new Promise(() => undefined) : Promise.resolve({});
    };
    const guarded = withQuarantine({ App: inner }, { store, limit, hooks: { App: hooks } }).App;
    if (!guarded) throw new Error('no App reconciler');
    return {
      store,
      guarded,
      reports,
      runs: () => runs,
      cleared: () => cleared,
      heal: () => (crash = false),
      bump: () => generation++,
    };
  }

  it('holds a key after `limit` runs in a row never ended, reports once, and lifts the hold on a new generation', async () => {
    const t = setup();
    // One after another, as runs of one key are: each reaches the reconciler and never ends.
    for (let i = 1; i <= 3; i++) {
      void t.guarded(key, ctx);
      while (t.runs() < i) await new Promise((resolve) => setImmediate(resolve));
    }
    const held = await t.guarded(key, ctx);
    expect(held.summary).toEqual({ quarantined: { since: '2026-01-01T00:00:00.000Z', unfinishedRuns: 3 } });
    expect(t.runs(), 'the fourth run did not reach the reconciler').toBe(3);
    expect(t.reports).toEqual([{ since: '2026-01-01T00:00:00.000Z', unfinished: 3, generation: 1 }]);
    expect((await t.guarded(key, ctx)).summary).toMatchObject({ quarantined: {} });
    expect(t.reports, 'reported once').toHaveLength(1);
    t.heal();
    t.bump();
    expect(await t.guarded(key, ctx)).toEqual({});
    expect(t.runs()).toBe(4);
    expect(t.cleared()).toBe(1);
    expect(await t.store.get(formatKey(key))).toBeUndefined();
  });

  it('does not count runs that ended, even with errors', async () => {
    const t = setup(2);
    t.heal();
    const failing = withQuarantine({ App: () => Promise.reject(new Error('boom')) }, { store: t.store, limit: 2, hooks: {} }).App;
    for (let i = 0; i < 5; i++) await expect(failing?.(key, ctx)).rejects.toThrow('boom');
    expect(await t.guarded(key, ctx)).toEqual({});
  });

  it('fails open when Redis cannot answer', async () => {
    const t = setup(1);
    t.heal();
    t.store.failing = true;
    expect(await t.guarded(key, ctx)).toEqual({});
    expect(await t.guarded(key, ctx)).toEqual({});
    expect(t.runs()).toBe(2);
  });
});
