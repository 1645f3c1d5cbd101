/**
 * The race behind workers that stopped taking jobs after a Sentinel failover, made deterministic: a client's
 * connection to the primary is lost, and while the client is asking a sentinel where the primary now is, the
 * sentinels announce the new primary (`+switch-master`). ioredis's failover detector then abandons the
 * connection attempt under way, and the client ends for good ("Connection is closed." on every command).
 * ebb's connection must come back by itself. The sentinel is a fake that answers only when told to; the
 * primary is a real redis-server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisServer } from '../../../harness/sandbox/redis.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';

const bulk = (s: string): string => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
const array = (items: string[]): string => `*${items.length}\r\n${items.map(bulk).join('')}`;

/** A sentinel that knows one primary; `hold()` makes it keep its answers to "where is the primary" until `release()`. */
class FakeSentinel {
  readonly server: Server;
  private held: (() => void)[] | undefined;
  private readonly subscribers = new Set<Socket>();
  private readonly sockets = new Set<Socket>();
  lookups = 0;

  private readonly primaryPort: number;

  constructor(primaryPort: number) {
    this.primaryPort = primaryPort;
    this.server = createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => {
        this.sockets.delete(socket);
        this.subscribers.delete(socket);
      });
      let buffer = '';
      socket.on('data', (chunk) => {
        buffer += chunk.toString();
        for (let cmd = parseCommand(buffer); cmd; cmd = parseCommand(buffer)) {
          buffer = buffer.slice(cmd.length);
          this.answer(
            socket,
            cmd.args.map((a) => a.toLowerCase()),
          );
        }
      });
    });
  }

  private answer(socket: Socket, args: string[]): void {
    if (args[0] === 'subscribe') {
      this.subscribers.add(socket);
      socket.write(`*3\r\n${bulk('subscribe')}${bulk(args[1] ?? '')}:1\r\n`);
    } else if (args[0] === 'sentinel' && args[1] === 'get-master-addr-by-name') {
      this.lookups++;
      const reply = (): void => void socket.write(array(['127.0.0.1', String(this.primaryPort)]));
      if (this.held) this.held.push(reply);
      else reply();
    } else if (args[0] === 'sentinel') {
      socket.write('*0\r\n');
    } else {
      socket.write('+OK\r\n');
    }
  }

  hold(): void {
    this.held = [];
  }

  release(): void {
    const replies = this.held ?? [];
    this.held = undefined;
    for (const r of replies) r();
  }

  /** Announces a failover to every subscriber, as sentinels do. */
  switchMaster(): void {
    const message = `*3\r\n${bulk('message')}${bulk('+switch-master')}${bulk(`ebb 127.0.0.1 ${this.primaryPort} 127.0.0.1 ${this.primaryPort}`)}`;
    for (const s of this.subscribers) s.write(message);
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

/** One RESP command (an array of bulk strings) at the start of `text`, or undefined when incomplete. */
function parseCommand(text: string): { args: string[]; length: number } | undefined {
  const head = /^\*(\d+)\r\n/.exec(text);
  if (!head) return undefined;
  let at = head[0].length;
  const args: string[] = [];
  for (let i = 0; i < Number(head[1]); i++) {
    const len = /^\$(\d+)\r\n/.exec(text.slice(at));
    if (!len) return undefined;
    at += len[0].length;
    if (text.length < at + Number(len[1]) + 2) return undefined;
    args.push(text.slice(at, at + Number(len[1])));
    at += Number(len[1]) + 2;
  }
  return { args, length: at };
}

describe('Sentinel mode, a failover announced while the client reconnects', () => {
  let dir = '';
  let redis: RedisServer | undefined;
  let sentinel: FakeSentinel | undefined;
  let sentinelPort = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-sentinel-race-'));
    redis = await startRedis({ dir });
    sentinel = new FakeSentinel(redis.port);
    await new Promise<void>((r) => sentinel!.server.listen(0, '127.0.0.1', r));
    sentinelPort = (sentinel.server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await sentinel?.close();
    await redis?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('connects again after the failover detector abandoned its connection attempt', async () => {
    const s = sentinel!;
    const cfg = parseQueueConfig({ EBB_REDIS_MODE: 'sentinel', EBB_REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`, EBB_REDIS_SENTINEL_MASTER: 'ebb' });
    const client = redisConnection(cfg.redis, { forWorker: true, name: 'ebb-race' }) as Redis;
    const admin = new Redis({ port: redis!.port, lazyConnect: true });
    try {
      await waitFor(() => (client.status === 'ready' && s.subscriberCount > 0 ? true : undefined), {
        timeoutMs: 15_000,
        what: 'connected, failover detector subscribed',
      });
      // The primary drops the connection (as a crash does); the reconnect asks the sentinel, which holds its answer.
      s.hold();
      const lookups = s.lookups;
      const list = await admin.client('LIST');
      const id = /id=(\d+) [^\n]*name=ebb-race /.exec(String(list))?.[1];
      expect(id).toBeDefined();
      await admin.client('KILL', 'ID', id!);
      await waitFor(() => (s.lookups > lookups ? true : undefined), { timeoutMs: 15_000, what: 'the client asking the sentinel again' });
      // The failover is announced while the client waits for the answer; then the answer comes.
      let ended = 0;
      client.on('end', () => ended++);
      s.switchMaster();
      // The detector acted: it closed its own subscriptions along with the attempt under way.
      await waitFor(() => (s.subscriberCount === 0 ? true : undefined), { timeoutMs: 15_000, what: 'the failover detector to act' });
      s.release();
      // ioredis ends the client here; ebb's connection connects again and serves commands.
      await waitFor(() => (client.status === 'ready' ? true : undefined), { timeoutMs: 15_000, what: `the client ready again (now ${client.status})` });
      expect(ended).toBe(1);
      expect(await client.ping()).toBe('PONG');
    } finally {
      admin.disconnect();
      client.disconnect();
    }
  }, 60_000);
});
