import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.ts';
import { formatKey, type ObjectKey } from '../../../src/queue/names.ts';
import { redisQuarantine, type QuarantineRecord, type QuarantineStore } from '../../../src/queue/quarantine.ts';
import { QUARANTINE_RETRY, withQuarantine, type QuarantineHooks } from '../../../src/workers/quarantine.ts';
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

  it('counts runs that never ended and those that ran alone, clears both when one ends, holds and releases', async () => {
    const store = redisQuarantine(redis.connection(false), redis.config().prefix);
    const id = formatKey(key);
    expect(await store.started(id)).toBe(0);
    expect(await store.started(id)).toBe(1);
    await store.alone(id);
    expect(await store.begin(id)).toEqual({ record: undefined, unfinished: 2, unfinishedAlone: 1, released: false });
    await store.ended(id);
    expect(await store.begin(id)).toEqual({ record: undefined, unfinished: 0, unfinishedAlone: 0, released: false });
    const record: QuarantineRecord = { since: '2026-01-01T00:00:00.000Z', unfinished: 3, generation: 4, strikes: 2, retryAt: '2026-01-01T00:10:00.000Z' };
    await store.hold(id, record);
    expect(await store.get(id)).toEqual(record);
    expect([...(await store.list())]).toEqual([[id, record]]);
    expect(await store.release(id)).toBe(true);
    expect(await store.get(id)).toBeUndefined();
    expect(await store.list(), 'a release is no hold').toEqual(new Map());
    expect(await store.release(id)).toBe(false);
    expect(await store.begin(id), 'release forgets unfinished runs; the next run sees the release').toEqual({
      record: undefined,
      unfinished: 0,
      unfinishedAlone: 0,
      released: true,
    });
    await store.forget(id);
    expect((await store.begin(id)).released).toBe(false);
  });

  it('reads a hold written before holds had retries as one retried at once', async () => {
    const conn = redis.connection(false);
    const prefix = redis.config().prefix;
    const store = redisQuarantine(conn, prefix);
    const id = formatKey(key);
    await conn.hset(`${prefix}:quarantine`, id, JSON.stringify({ since: '2026-01-01T00:00:00.000Z', unfinished: 5, generation: 2 }));
    expect(await store.get(id)).toEqual({ since: '2026-01-01T00:00:00.000Z', unfinished: 5, generation: 2, strikes: 1, retryAt: '2026-01-01T00:00:00.000Z' });
  });
});

/** An in-memory store with the same semantics, for the wrapper's rules. */
function memoryStore(): QuarantineStore & { failing: boolean } {
  const inflight = new Map<string, number>();
  const alone = new Map<string, number>();
  const held = new Map<string, QuarantineRecord | 'released'>();
  const fail = (): Promise<never> => Promise.reject(new Error('redis away'));
  const record = (k: string): QuarantineRecord | undefined => ((r) => (r === 'released' ? undefined : r))(held.get(k));
  const s = {
    failing: false,
    started: (k: string) => (s.failing ? fail() : Promise.resolve(((n) => (inflight.set(k, n + 1), n))(inflight.get(k) ?? 0))),
    alone: (k: string) => Promise.resolve(void alone.set(k, (alone.get(k) ?? 0) + 1)),
    ended: (k: string) => Promise.resolve(void (inflight.delete(k), alone.delete(k))),
    get: (k: string) => (s.failing ? fail() : Promise.resolve(record(k))),
    hold: (k: string, r: QuarantineRecord) => Promise.resolve(void held.set(k, r)),
    release: (k: string) => Promise.resolve(record(k) !== undefined && (held.set(k, 'released'), inflight.delete(k), alone.delete(k), true)),
    forget: (k: string) => Promise.resolve(void held.delete(k)),
    list: () => Promise.resolve(new Map([...held].flatMap(([k, r]) => (r === 'released' ? [] : [[k, r] as const])))),
    begin: async (k: string) => {
      if (s.failing) return fail();
      const released = held.get(k) === 'released';
      return { record: record(k), unfinished: await s.started(k), unfinishedAlone: alone.get(k) ?? 0, released };
    },
  };
  return s;
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('withQuarantine', () => {
  function setup(limit = 2) {
    const store = memoryStore();
    const reports: QuarantineRecord[] = [];
    let cleared = 0;
    let now = new Date('2026-01-01T00:00:00Z');
    const hooks: QuarantineHooks = {
      generation: () => Promise.resolve(1),
      report: (_k, _c, r) => Promise.resolve(void reports.push(r)),
      clear: () => Promise.resolve(void cleared++),
    };
    const c: ReconcileContext = { ...ctx, now: () => now };
    // Which keys are inside their reconciler right now. A key in `killers` never returns (its worker "dies");
    // the others return at `finish()`, unless the worker died first.
    const running = new Set<string>();
    const killers = new Set<string>();
    let pending: (() => void)[] = [];
    const inner: Reconciler = (k) => {
      running.add(k.name);
      if (killers.has(k.name)) return new Promise(() => undefined);
      return new Promise((resolve) => pending.push(() => (running.delete(k.name), resolve({}))));
    };
    let guarded = withQuarantine({ App: inner }, { store, limit, retryAfterMs: 60_000, retries: 1, hooks: { App: hooks } }).App;
    const run = (name: string) => (guarded as Reconciler)({ ...key, name }, c);
    return {
      store,
      reports,
      running,
      killers,
      run,
      cleared: () => cleared,
      finish: async () => {
        const now = pending;
        pending = [];
        for (const f of now) f();
        await settle();
      },
      /** Runs one key to its end. */
      complete: async (name: string) => {
        const r = run(name);
        await settle();
        const now = pending;
        pending = [];
        for (const f of now) f();
        return r;
      },
      advance: (ms: number) => (now = new Date(now.getTime() + ms)),
      /** A new worker process: nothing in it runs (the old one died with its runs). */
      restart: () => {
        running.clear();
        pending = [];
        guarded = withQuarantine({ App: inner }, { store, limit, retryAfterMs: 60_000, retries: 1, hooks: { App: hooks } }).App;
      },
    };
  }
  const id = (name: string): string => formatKey({ ...key, name });

  it('holds only the key that keeps killing its worker while alone; its co-runners are never held', async () => {
    const t = setup(2);
    t.killers.add('attacker');
    for (let kill = 0; kill < 4; kill++) {
      // The victims and the attacker start together; a suspect attacker waits until the victims are done.
      void t.run('victim-a');
      void t.run('victim-b');
      void t.run('attacker');
      await settle();
      if (!t.running.has('attacker')) await t.finish();
      expect(t.running.has('attacker') || kill === 3, `kill ${kill}: the attacker ran`).toBe(true);
      // The worker dies with whatever runs in it.
      t.restart();
      // The victims' next runs (alone if they died with the worker) end normally.
      expect(await t.complete('victim-a')).toEqual({});
      expect(await t.complete('victim-b')).toEqual({});
    }
    expect([...(await t.store.list()).keys()]).toEqual([id('attacker')]);
    expect(t.reports).toHaveLength(1);
    expect(t.reports[0]).toMatchObject({ strikes: 1, retryAt: '2026-01-01T00:01:00.000Z', generation: 1 });
    const held = await t.run('attacker');
    expect(held.summary).toMatchObject({ quarantined: { holds: 1 } });
    expect(held.wait).toEqual({ afterMs: 60_000, reason: QUARANTINE_RETRY });
    expect(t.running.has('attacker'), 'a held key does not reach its reconciler').toBe(false);
  });

  it('a suspect waits until it runs alone', async () => {
    const t = setup(2);
    await t.store.started(id('suspect'));
    t.killers.add('long');
    void t.run('long');
    await settle();
    void t.run('suspect');
    await settle();
    expect(t.running.has('suspect'), 'not beside a running reconcile').toBe(false);
    t.restart();
    expect(await t.complete('suspect')).toEqual({});
    expect((await t.store.begin(id('suspect'))).unfinishedAlone, 'killed while waiting: not counted as alone').toBe(0);
  });

  it('retries a held key alone when due, holds it longer when killed again, then waits for a release', async () => {
    const t = setup(1);
    t.killers.add('attacker');
    for (let i = 0; i < 2; i++) {
      void t.run('attacker');
      await settle();
      t.restart();
    }
    expect((await t.run('attacker')).wait?.afterMs).toBe(60_000);
    t.advance(60_000);
    void t.run('attacker');
    await settle();
    expect(t.running.has('attacker'), 'the retry ran').toBe(true);
    t.restart();
    const again = await t.run('attacker');
    expect(again.summary).toMatchObject({ quarantined: { holds: 2, retryAt: null } });
    expect(again.wait, 'past the retries: no timer').toBeUndefined();
    expect(t.reports.map((r) => r.strikes)).toEqual([1, 2]);
    t.advance(3_600_000);
    expect((await t.run('attacker')).summary).toMatchObject({ quarantined: {} });
    expect(t.running.has('attacker')).toBe(false);
    // The operator's release: the next run reconciles and withdraws the report.
    expect(await t.store.release(id('attacker'))).toBe(true);
    t.killers.delete('attacker');
    expect(await t.complete('attacker')).toEqual({});
    expect(t.cleared()).toBe(1);
    expect(await t.complete('attacker')).toEqual({});
    expect(t.cleared(), 'withdrawn once').toBe(1);
  });

  it('a retry that ends lifts the hold', async () => {
    const t = setup(1);
    t.killers.add('flaky');
    for (let i = 0; i < 2; i++) {
      void t.run('flaky');
      await settle();
      t.restart();
    }
    expect((await t.run('flaky')).summary).toMatchObject({ quarantined: {} });
    t.killers.delete('flaky');
    t.advance(60_000);
    expect(await t.complete('flaky')).toEqual({});
    expect(await t.store.get(id('flaky'))).toBeUndefined();
    expect(t.cleared()).toBe(1);
  });

  it('does not count runs that ended, even with errors', async () => {
    const t = setup(1);
    const failing = withQuarantine({ App: () => Promise.reject(new Error('boom')) }, { store: t.store, limit: 1, retryAfterMs: 1, hooks: {} }).App;
    for (let i = 0; i < 5; i++) await expect(failing?.(key, ctx)).rejects.toThrow('boom');
    expect(await t.store.list()).toEqual(new Map());
    expect(await t.complete(key.name)).toEqual({});
  });

  it('fails open when Redis cannot answer', async () => {
    const t = setup(1);
    t.store.failing = true;
    expect(await t.complete('web')).toEqual({});
    expect(await t.complete('web')).toEqual({});
  });
});
