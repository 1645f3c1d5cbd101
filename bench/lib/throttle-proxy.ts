/**
 * A bandwidth-limited loopback TCP proxy in front of the image registry, for the real-node pull benchmark.
 * Every byte from the registry to its clients passes one shared token bucket (all connections together get
 * `rate` bytes per second, as one link would); requests to the registry are not limited.
 *
 * Run as its own process, so its timers never compete with the benchmark's event loop:
 *   node bench/lib/throttle-proxy.ts <target host:port> <bytes per second>
 * It prints `listening <port>` once bound to 127.0.0.1 and exits when its stdin closes (its parent is gone).
 * startThrottleProxy() spawns it and stops it by its PID.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type Socket } from 'node:net';
import { createInterface } from 'node:readline';

/** One shared bucket: each chunk reserves its transmission time after the previous one's, at `rate` bytes/s. */
class Bucket {
  private nextFree = 0;
  private readonly rate: number;
  constructor(rate: number) {
    this.rate = rate;
  }
  /** Milliseconds to wait before `bytes` may be sent. */
  reserve(bytes: number): number {
    const now = performance.now();
    const start = Math.max(now, this.nextFree);
    this.nextFree = start + (bytes / this.rate) * 1000;
    return this.nextFree - now;
  }
}

function relay(client: Socket, target: { host: string; port: number }, bucket: Bucket): void {
  const upstream = createConnection(target);
  const destroy = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', destroy).on('close', () => upstream.destroy());
  upstream.on('error', destroy);
  client.pipe(upstream);
  // The registry's data waits its turn in the bucket; the client is ended only after the last chunk went out.
  let pending = Promise.resolve();
  upstream.on('data', (chunk: Buffer) => {
    upstream.pause();
    const wait = bucket.reserve(chunk.length);
    pending = new Promise<void>((resolve) =>
      setTimeout(() => {
        resolve();
        if (client.destroyed) return;
        if (client.write(chunk)) upstream.resume();
        else client.once('drain', () => upstream.resume());
      }, wait),
    );
  });
  upstream.on('end', () => void pending.then(() => client.end()));
}

function serve(targetArg: string, rate: number): void {
  const [host, port] = [targetArg.slice(0, targetArg.lastIndexOf(':')), Number(targetArg.slice(targetArg.lastIndexOf(':') + 1))];
  const bucket = new Bucket(rate);
  const server = createServer((client) => relay(client, { host, port }, bucket));
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
  });
  process.stdin.resume();
  process.stdin.on('close', () => process.exit(0));
  process.stdin.on('end', () => process.exit(0));
}

export interface ThrottleProxy {
  /** `127.0.0.1:<port>`: the registry part of image references pulled through the proxy. */
  host: string;
  pid: number;
  stop(): Promise<void>;
}

/** Spawns the proxy in front of `target` (`host:port`), limited to `bytesPerSecond`. */
export async function startThrottleProxy(target: string, bytesPerSecond: number, signal: AbortSignal): Promise<ThrottleProxy> {
  const child: ChildProcess = spawn(process.execPath, [import.meta.filename, target, String(Math.round(bytesPerSecond))], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const fail = (why: string): void => reject(new Error(`throttle proxy: ${why}`));
    lines.once('line', (line) => (line.startsWith('listening ') ? resolve(Number(line.slice(10))) : fail(`unexpected output ${line}`)));
    child.once('exit', (code) => fail(`exited (${code})`));
    signal.addEventListener('abort', () => fail('aborted'), { once: true });
  }).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  return { host: `127.0.0.1:${port}`, pid: child.pid ?? 0, stop };
}

if (process.argv[1] === import.meta.filename) {
  const [target, rate] = process.argv.slice(2);
  if (!target || !Number(rate)) throw new Error('usage: node bench/lib/throttle-proxy.ts <host:port> <bytes per second>');
  serve(target, Number(rate));
}
