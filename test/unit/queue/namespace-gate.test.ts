import { describe, expect, it } from 'vitest';
import { namespaceGate } from '../../../src/queue/namespace-gate.ts';
import { useRedis } from './support.ts';

describe('namespaceGate on a real Redis', () => {
  const redis = useRedis();
  const gateOf = (cap: number, leaseMs = 60_000) =>
    namespaceGate(redis.connection(false), redis.config().prefix, { cap, leaseMs, minDelayMs: 500, random: () => 0.5 });

  it('admits up to the cap per namespace, again after a release, and keeps namespaces apart', async () => {
    const gate = gateOf(2);
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
    const gate = gateOf(1, 1_000);
    const now = Date.now();
    expect(await gate.acquire('team-a', 'dead', now)).toBe(true);
    expect(await gate.acquire('team-a', 'next', now + 999)).toBe(false);
    expect(await gate.acquire('team-a', 'next', now + 1_000)).toBe(true);
  });

  it('delays a capped job between one and two minimum delays', () => {
    expect(gateOf(1).retryDelayMs()).toBe(750);
  });
});
