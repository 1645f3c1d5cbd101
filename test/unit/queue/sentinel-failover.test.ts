/**
 * Sentinel mode against real servers (a primary, a replica, three sentinels): ebb's queue code runs through
 * the primary the sentinels name; the primary is killed (SIGKILL, by PID) while objects are being enqueued
 * and reconciled; the sentinels promote the replica, the connections follow it, the producer reports Redis
 * restored (what makes the watcher enqueue every known object again), and every object settles: no job or
 * timer is lost for good, and no object is reconciled twice at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelSet, type SentinelSet } from '../../../harness/sandbox/redis-ha.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { addAcrossCrash, failoverConfig, startFlow, waitSettled, within, type Flow } from './ha-flow.ts';

const OBJECTS = 40;

describe('Sentinel mode', () => {
  let dir = '';
  let set: SentinelSet | undefined;
  let flow: Flow | undefined;
  const ac = new AbortController();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-sentinel-'));
    set = await startSentinelSet({ dir, masterName: 'ebb-test', downAfterMs: 1_000, failoverTimeoutMs: 3_000 });
  }, 90_000);

  afterAll(async () => {
    ac.abort();
    await flow?.close();
    await set?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps every job and timer through a failover of the primary', async () => {
    const s = set!;
    const cfg = failoverConfig({
      EBB_REDIS_MODE: 'sentinel',
      EBB_REDIS_SENTINELS: s.sentinels.map((x) => `127.0.0.1:${x.port}`).join(','),
      EBB_REDIS_SENTINEL_MASTER: s.masterName,
      EBB_QUEUE_PREFIX: '{sentinel-test}',
    });
    flow = startFlow(cfg, 1_000);
    const f = flow;
    // Mid-stream: half enqueued, some already settled; the primary crashes.
    const adding = addAcrossCrash(
      f,
      OBJECTS,
      async () => {
        expect(await s.primaryPort()).toBe(s.primary.port);
        await s.primary.kill();
      },
      ac.signal,
    );
    await waitFor(async () => ((await s.primaryPort()) === s.replica.port ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'the sentinels to promote the replica',
    });
    await within(f, adding, 60_000, 'enqueueing every object');
    await waitSettled(f, OBJECTS, 90_000);
    expect(f.restored()).toBeGreaterThanOrEqual(1);
    expect(f.overlaps()).toBe(0);
    // The producer now talks to the promoted replica.
    expect(await f.producer.info('server').then((i) => /tcp_port:(\d+)/.exec(i)?.[1])).toBe(String(s.replica.port));
  }, 240_000);
});
