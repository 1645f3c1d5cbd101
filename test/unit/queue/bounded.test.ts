/**
 * Bounded waits on Redis, against a real redis-server: a producer command to a Redis that stalls (SIGSTOP)
 * fails at its deadline instead of hanging, and so does a BullMQ Worker's own (non-blocking) command, while
 * the Worker's blocking reads outlive that deadline; and
 * a connection's reachability turns /healthz's answer after the set time out of reach, or silent (a paused
 * Redis keeps the TCP connection open: only a PING round trip tells), and back when Redis answers again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../harness/sandbox/ports.ts';
import { startRedis, type RedisServer } from '../../../harness/sandbox/redis.ts';
import { startOpsServer } from '../../../src/common/http.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { RedisReachability } from '../../../src/queue/reachability.ts';

let dir = '';
const servers: RedisServer[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ebb-bounded-'));
});
afterAll(async () => {
  for (const s of servers) {
    try {
      process.kill(s.pid, 'SIGCONT');
    } catch {
      // already stopped
    }
    await s.stop();
  }
  await rm(dir, { recursive: true, force: true });
});

describe('Redis commands have deadlines', () => {
  it("fails a producer's command to a stalled Redis at its deadline, and leaves blocking reads alone", async () => {
    const server = await startRedis({ dir });
    servers.push(server);
    const producer = redisConnection(server.url, { forWorker: false, name: 'bounded-producer', commandTimeoutMs: 300 });
    const worker = redisConnection(server.url, { forWorker: true, name: 'bounded-worker', commandTimeoutMs: 300 });
    try {
      expect(await producer.ping()).toBe('PONG');
      // A blocking read on a worker connection's copy (where BullMQ sends its blocking reads) that lasts longer
      // than the deadline completes with the server's own timeout.
      const copy = worker.duplicate();
      try {
        expect(await copy.bzpopmin('{bounded}:marker', 1)).toBeNull();
      } finally {
        copy.disconnect();
      }

      process.kill(server.pid, 'SIGSTOP');
      const started = Date.now();
      await expect(producer.ping()).rejects.toThrow(/timed out/i);
      expect(Date.now() - started).toBeLessThan(3_000);
      process.kill(server.pid, 'SIGCONT');
      expect(await producer.ping()).toBe('PONG');
    } finally {
      producer.disconnect();
      worker.disconnect();
    }
  }, 30_000);
});

describe('BullMQ Worker connections have deadlines', () => {
  it("fails a Worker's command to a stalled Redis at its deadline, never its blocking read, and works again after", async () => {
    const server = await startRedis({ dir });
    servers.push(server);
    const connection = redisConnection(server.url, { forWorker: true, name: 'bounded-worker', commandTimeoutMs: 300 });
    const producer = redisConnection(server.url, { forWorker: false, name: 'bounded-producer' });
    const errors: Error[] = [];
    const done: string[] = [];
    const prefix = '{bounded-worker}';
    const worker = new Worker<{ n: number }>('q', (job) => Promise.resolve(void done.push(job.id ?? '')), { connection, prefix, drainDelay: 2 });
    worker.on('error', (err) => errors.push(err));
    const queue = new Queue('q', { connection: producer, prefix });
    try {
      await worker.waitUntilReady();
      const backend = worker.getBackend();
      const blocking = await backend.blockingClient;
      expect(blocking?.options.commandTimeout).toBeUndefined();
      // The Worker's idle blocking read (2 s) outlasts the 300 ms deadline: seen through MONITOR, a blocking read
      // that waits longer than the deadline, then the next one, sent only once the first has returned.
      const monitor = await producer.monitor();
      const reads: number[] = [];
      monitor.on('monitor', (_time: string, args: string[]) => {
        if (args[0]?.toLowerCase() === 'bzpopmin') reads.push(Number(args.at(-1)));
      });
      try {
        await waitFor(() => (reads.length >= 2 ? true : undefined), { timeoutMs: 20_000, intervalMs: 20, what: 'two idle blocking reads' });
      } finally {
        monitor.disconnect();
      }
      expect(reads[0]).toBeGreaterThan(0.3);
      expect(errors.map((e) => e.message)).toEqual([]);

      process.kill(server.pid, 'SIGSTOP');
      const own = await backend.client;
      const started = Date.now();
      await expect(own.get(`${prefix}:probe`)).rejects.toThrow(/timed out/i);
      expect(Date.now() - started).toBeLessThan(3_000);
      process.kill(server.pid, 'SIGCONT');

      await queue.add('j', { n: 1 }, { jobId: 'after-the-stall' });
      await waitFor(() => (done.includes('after-the-stall') ? true : undefined), { timeoutMs: 15_000, intervalMs: 50, what: 'the job after the stall' });
    } finally {
      await worker.close(true);
      await queue.close();
      connection.disconnect();
      producer.disconnect();
    }
  }, 40_000);
});

describe('RedisReachability', () => {
  it('reports Redis out of reach only after the set time, and never with 0', () => {
    let now = 1_000;
    const r = new RedisReachability(() => now);
    now += 5_000;
    expect(r.problem(10_000)).toBeUndefined();
    now += 6_000;
    expect(r.problem(10_000)).toBe('redis unreachable for 11s');
    expect(r.problem(0)).toBeUndefined();
    r.ready();
    expect(r.problem(10_000)).toBeUndefined();
    r.lost();
    now += 4_000;
    r.lost(); // a second close in the same outage does not restart the clock
    now += 7_000;
    expect(r.problem(10_000)).toBe('redis unreachable for 11s');
  });

  it('reports a Redis that is connected but silent only once its first unanswered PING is older than the limit', () => {
    let now = 1_000;
    const r = new RedisReachability(() => now);
    r.ready();
    r.pinged();
    now += 4_000;
    r.pinged(); // a later PING of the same silence does not restart the clock
    now += 7_000;
    expect(r.problem(10_000)).toBe('redis has not answered a PING for 11s');
    r.answered();
    expect(r.problem(10_000)).toBeUndefined();
  });

  it('follows a real connection: out of reach while nothing listens, healthy once Redis answers', async () => {
    const port = await freePort();
    const reachability = new RedisReachability();
    const client = redisConnection(`redis://127.0.0.1:${port}`, { forWorker: false, name: 'reach', reachability });
    try {
      await waitFor(() => reachability.problem(200), { timeoutMs: 5_000, intervalMs: 20, what: 'Redis reported out of reach' });
      const server = await startRedis({ dir, port });
      servers.push(server);
      await waitFor(() => (reachability.problem(200) === undefined ? true : undefined), { timeoutMs: 10_000, intervalMs: 20, what: 'Redis back' });
      await server.stop();
      await waitFor(() => reachability.problem(200), { timeoutMs: 5_000, intervalMs: 20, what: 'the outage reported' });
    } finally {
      client.disconnect();
    }
  }, 30_000);

  it('/healthz fails while a stalled Redis (SIGSTOP) leaves PINGs unanswered past the limit, and heals after SIGCONT', async () => {
    const server = await startRedis({ dir });
    servers.push(server);
    const reachability = new RedisReachability(Date.now, 100);
    // When the last PING was answered: silence is counted from the first PING sent after it, never earlier.
    let lastAnswer = Date.now();
    const answered = reachability.answered.bind(reachability);
    reachability.answered = (): void => {
      lastAnswer = Date.now();
      answered();
    };
    const client = redisConnection(server.url, { forWorker: false, name: 'probed', commandTimeoutMs: 300, reachability });
    const limitMs = 1_000;
    const ops = await startOpsServer({
      address: '127.0.0.1',
      port: 0,
      registry: new Registry(),
      healthz: () => reachability.problem(limitMs),
      readyz: () => undefined,
    });
    const healthz = async (): Promise<{ status: number; text: string }> => {
      const res = await fetch(`http://127.0.0.1:${ops.port}/healthz`);
      return { status: res.status, text: await res.text() };
    };
    try {
      // Connected first: /healthz is also 200 during the first second of a connection not yet ready, and a stop
      // before the connection is ready is an unreachable Redis, not a silent one.
      await waitFor(async () => (client.status === 'ready' && (await healthz()).status === 200 ? true : undefined), {
        timeoutMs: 10_000,
        intervalMs: 50,
        what: 'connected and healthy at start',
      });
      process.kill(server.pid, 'SIGSTOP');
      const failing = await waitFor(
        async () => {
          const h = await healthz();
          return h.status === 503 ? h : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 50, what: '/healthz failing on the stalled Redis' },
      );
      expect(failing.text).toMatch(/redis has not answered a PING for \d+s/);
      // Not before the limit: no PING was answered for longer than it first. (Measured from the last answer, not
      // from the SIGSTOP: on a busy machine a PING sent before the stop may still have been waiting for Redis.)
      expect(Date.now() - lastAnswer).toBeGreaterThanOrEqual(limitMs);
      expect(client.status).toBe('ready');
      process.kill(server.pid, 'SIGCONT');
      await waitFor(async () => ((await healthz()).status === 200 ? true : undefined), {
        timeoutMs: 10_000,
        intervalMs: 50,
        what: '/healthz healthy after SIGCONT',
      });
    } finally {
      await ops.close();
      client.disconnect();
    }
  }, 30_000);
});
