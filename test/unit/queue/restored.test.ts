/**
 * A connection reports each time Redis answers again after an outage (the watcher resyncs then, since a
 * Redis that comes back may have lost its jobs and timers): against a real redis-server stopped and started
 * again on the same port.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisServer } from '../../../harness/sandbox/redis.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';

describe('redisConnection onRestored', () => {
  let dir = '';
  let server: RedisServer | undefined;
  afterAll(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is called once per outage, not at the first connect', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-restored-'));
    server = await startRedis({ dir });
    let restored = 0;
    const client = redisConnection(server.url, { forWorker: false, name: 'restored-test', onRestored: () => restored++ });
    try {
      expect(await client.ping()).toBe('PONG');
      expect(restored).toBe(0);
      for (let outage = 1; outage <= 2; outage++) {
        const port = server.port;
        await server.stop();
        await waitFor(() => (client.status !== 'ready' ? true : undefined), { timeoutMs: 5_000, intervalMs: 20, what: 'the client to notice' });
        server = await startRedis({ dir, port });
        await waitFor(() => (restored === outage ? true : undefined), { timeoutMs: 10_000, intervalMs: 20, what: `restored after outage ${outage}` });
        expect(await client.ping()).toBe('PONG');
      }
      expect(restored).toBe(2);
    } finally {
      client.disconnect();
    }
  }, 40_000);
});
