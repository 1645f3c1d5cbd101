import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortedError } from '../../src/common/wait.ts';
import { freePort } from './ports.ts';
import { startRedis } from './redis.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startRedis', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-redis-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a loopback redis-server without persistence and with noeviction, stopped by its PID', async () => {
    const server = await startRedis({ dir: join(dir, 'nested', 'redis') });
    const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
      expect(alive(server.pid)).toBe(true);
      await client.connect();
      expect(await client.ping()).toBe('PONG');
      expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
      expect(await client.config('GET', 'save')).toEqual(['save', '']);
      expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
      expect(await client.config('GET', 'bind')).toEqual(['bind', '127.0.0.1']);
    } finally {
      client.disconnect();
      await server.stop();
    }
    expect(alive(server.pid)).toBe(false);
    await server.stop(); // idempotent
  });

  it('fails clearly on a fixed port another server holds, and never mistakes that server for its own', async () => {
    const first = await startRedis({ dir });
    try {
      await expect(startRedis({ dir, port: first.port })).rejects.toThrow(/exited/);
      expect(alive(first.pid)).toBe(true);
    } finally {
      await first.stop();
    }
  });

  it('uses the fixed port it is given', async () => {
    const port = await freePort();
    const server = await startRedis({ dir, port });
    await server.stop();
    expect(server.port).toBe(port);
  });

  it('stops the child when the start is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(startRedis({ dir, signal: controller.signal })).rejects.toBeInstanceOf(AbortedError);
  });
});
