import { startChild, type Child } from './process.ts';
import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { AbortedError, sleep } from '../../src/common/wait.ts';
import type { Logger } from '../../src/common/log.ts';
import { freePort } from './ports.ts';

export interface StartRedisOptions {
  /** Parent directory; each server gets its own `redis-*` directory (data dir and log) inside it. */
  dir: string;
  /** A fixed port; when omitted a free one is picked (and re-picked if another process takes it first). */
  port?: number;
  /** Cancels the start (the child is stopped); has no effect once startRedis resolved. */
  signal?: AbortSignal;
  log?: Logger;
  /** How long to wait for the server to answer; default 15 s. */
  readyTimeoutMs?: number;
}

export interface RedisServer {
  url: string;
  port: number;
  pid: number;
  /** SIGTERM to this server's PID, SIGKILL after a timeout; idempotent. */
  stop(): Promise<void>;
}

const START_ATTEMPTS = 5;
const STOP_TIMEOUT_MS = 5_000;

/**
 * Starts `redis-server` as a child process on 127.0.0.1 without persistence and with `noeviction` (the
 * queue contract requires it), and resolves once it answers (PING-equivalent `INFO server`, which also proves
 * that the server answering is the child just started, not another process on the same port).
 */
export async function startRedis(opts: StartRedisOptions): Promise<RedisServer> {
  const parent = resolve(opts.dir);
  await mkdir(parent, { recursive: true });
  let lastError: Error | undefined;
  for (let attempt = 1; attempt <= (opts.port === undefined ? START_ATTEMPTS : 1); attempt++) {
    const port = opts.port ?? (await freePort());
    const dir = await mkdtemp(join(parent, 'redis-'));
    const child = spawnRedis(port, dir);
    try {
      await waitUntilReady(child, port, opts);
      opts.log?.info({ port, pid: child.pid, dir }, 'redis started');
      return { url: `redis://127.0.0.1:${port}`, port, pid: child.pid, stop: () => child.stop(STOP_TIMEOUT_MS) };
    } catch (err) {
      await child.stop(STOP_TIMEOUT_MS);
      if (err instanceof AbortedError) throw err;
      lastError = err as Error;
      // The usual cause is a port taken between freePort() and bind; a fixed port is not retried.
      opts.log?.warn({ port, attempt, err: lastError.message }, 'redis did not start; retrying on another port');
    }
  }
  throw lastError ?? new Error('redis-server did not start');
}

type RedisChild = Child;

function spawnRedis(port: number, dir: string): RedisChild {
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--maxmemory-policy',
    'noeviction',
    '--daemonize',
    'no',
  ];
  // startChild stops it by PID, and its reaper stops it if this process dies first.
  return startChild('redis-server', 'redis-server', args, join(dir, 'redis.log'));
}

async function waitUntilReady(child: RedisChild, port: number, opts: StartRedisOptions): Promise<void> {
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 15_000);
  let exited: string | undefined;
  void child.exited.then((how) => {
    exited = how;
  });
  for (;;) {
    if (opts.signal?.aborted) throw new AbortedError();
    if (exited !== undefined) throw new Error(`redis-server on port ${port} exited (${exited}): ${await logTail(child)}`);
    if (await answersAs(port, child.pid)) return;
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer PING in time: ${await logTail(child)}`);
    await sleep(50, opts.signal);
  }
}

/**
 * One field of `INFO <section>` from the server on `port`, over a raw socket (no client library, no
 * retries): undefined when nothing answers in time, the server refuses, or the field is absent.
 */
export function infoField(port: number, section: string, field: string, timeoutMs = 1_000): Promise<string | undefined> {
  return new Promise((resolveField) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (value: string | undefined): void => {
      socket.destroy();
      resolveField(value);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once('connect', () => socket.write(`*2\r\n$4\r\nINFO\r\n$${Buffer.byteLength(section)}\r\n${section}\r\n`));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      if (reply.startsWith('-')) return done(undefined);
      const match = new RegExp(`(?:^|\r\n)${field}:([^\r]*)\r\n`).exec(reply);
      if (match) done(match[1]);
    });
  });
}

/**
 * True when the server on `port` answers and is the expected process: `INFO server` reports its
 * process_id, so a server another process already runs on that port is never mistaken for ours.
 */
export async function answersAs(port: number, pid: number, timeoutMs = 1_000): Promise<boolean> {
  return (await infoField(port, 'server', 'process_id', timeoutMs)) === String(pid);
}

async function logTail(child: RedisChild): Promise<string> {
  const text = (await readFile(child.logFile, 'utf8').catch(() => '')).trim();
  return text.split('\n').slice(-3).join(' | ') || '(no log output)';
}
