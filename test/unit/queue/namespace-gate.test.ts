import { describe, expect, it } from 'vitest';
import { namespaceGate, parseNamespaceCap, type NamespaceCap, type NamespaceGate } from '../../../src/queue/namespace-gate.ts';
import { workerSlots, workerSlotsKey } from '../../../src/queue/worker-slots.ts';
import { createLogger } from '../../../src/common/log.ts';
import { useRedis } from './support.ts';

describe('namespaceGate on a real Redis', () => {
  const redis = useRedis();
  const gateOf = (cap: NamespaceCap, leaseMs = 60_000, prefix = redis.config().prefix): NamespaceGate => {
    const gate = namespaceGate(redis.connection(false), prefix, { cap, leaseMs, minDelayMs: 500, random: () => 0.5 });
    if (!gate) throw new Error('expected a gate');
    return gate;
  };
  const count = (n: number): NamespaceCap => ({ kind: 'count', count: n });

  it('admits up to the cap per namespace, again after a release, and keeps namespaces apart', async () => {
    const gate = gateOf(count(2));
    const now = Date.now();
    expect(await gate.acquire('team-a', 'j1', now)).toBe(true);
    expect(await gate.acquire('team-a', 'j2', now)).toBe(true);
    expect(await gate.acquire('team-a', 'j3', now)).toBe(false);
    expect(await gate.acquire('team-b', 'j4', now), 'another namespace is not capped by team-a').toBe(true);
    expect(await gate.acquire('team-a', 'j1', now), 'a holder asking again keeps its place').toBe(true);
    await gate.release('team-a', 'j1');
    expect(await gate.acquire('team-a', 'j3', now)).toBe(true);
  });

  it('lets a lease of a dead holder lapse', async () => {
    const gate = gateOf(count(1), 1_000);
    const now = Date.now();
    expect(await gate.acquire('team-a', 'dead', now)).toBe(true);
    expect(await gate.acquire('team-a', 'next', now + 999)).toBe(false);
    expect(await gate.acquire('team-a', 'next', now + 1_000)).toBe(true);
  });

  it('is off for a count of 0', () => {
    expect(namespaceGate(redis.connection(false), redis.config().prefix, { cap: count(0), leaseMs: 1_000, minDelayMs: 500 })).toBeUndefined();
  });

  it('with a share, caps at that part of the live workers slots, and follows workers that come and go', async () => {
    const client = redis.connection(false);
    const prefix = redis.config().prefix;
    const gate = gateOf({ kind: 'share', percent: 75 }, 60_000, prefix);
    const now = Date.now();
    const one = workerSlots(client, prefix, { slots: 4, everyMs: 60_000, log: createLogger('test', 'silent'), id: 'w1' });
    await one.start();
    // 75 % of 4 slots: 3.
    for (const j of ['j1', 'j2', 'j3']) expect(await gate.acquire('team-a', j, now)).toBe(true);
    expect(await gate.acquire('team-a', 'j4', now)).toBe(false);
    expect(await gate.acquire('team-b', 'k1', now), 'the slots left are for other namespaces').toBe(true);
    const two = workerSlots(client, prefix, { slots: 4, everyMs: 60_000, log: createLogger('test', 'silent'), id: 'w2' });
    await two.start();
    // 75 % of 8 slots: 6.
    for (const j of ['j4', 'j5', 'j6']) expect(await gate.acquire('team-a', j, now)).toBe(true);
    expect(await gate.acquire('team-a', 'j7', now)).toBe(false);
    await two.stop();
    await one.stop();
    expect(await client.zcard(workerSlotsKey(prefix)), 'a stopped worker leaves the registry').toBe(0);
    expect(await gate.acquire('team-a', 'j7', now), 'no worker registered (the registry lost): the cap admits').toBe(true);
  });

  it('with a share, leaves out lapsed workers and still admits one job per namespace', async () => {
    const client = redis.connection(false);
    const prefix = redis.config().prefix;
    const gate = gateOf({ kind: 'share', percent: 10 }, 60_000, prefix);
    const now = Date.now();
    await client.zadd(workerSlotsKey(prefix), now - 1, 'dead|100', now + 60_000, 'live|2');
    expect(await gate.acquire('team-a', 'j1', now), '10 % of 2 slots rounds down to 0: at least one').toBe(true);
    expect(await gate.acquire('team-a', 'j2', now), 'the lapsed worker slots do not count').toBe(false);
    expect(await client.zscore(workerSlotsKey(prefix), 'dead|100')).toBeNull();
  });

  it('delays a capped job between one and two minimum delays', () => {
    expect(gateOf(count(1)).retryDelayMs()).toBe(750);
  });
});

describe('parseNamespaceCap', () => {
  it.each([
    ['0', { kind: 'count', count: 0 }],
    ['12', { kind: 'count', count: 12 }],
    ['75%', { kind: 'share', percent: 75 }],
    ['100%', { kind: 'share', percent: 100 }],
  ])('%s', (text, cap) => expect(parseNamespaceCap(text)).toEqual(cap));
});
