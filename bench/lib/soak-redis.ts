/**
 * The soak's own Redis, configured as in the manifests (AOF on, no RDB snapshots, `noeviction`), on a fixed
 * port and data directory so it can be restarted the way a Redis pod is: stopped (SIGTERM, or SIGKILL to
 * lose the last second of AOF) and started again on the same port, reloading its append-only file.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { answersAs, infoField } from '../../harness/sandbox/redis.ts';
import { startChild, type Child } from '../../harness/sandbox/process.ts';
import { freePort } from '../../harness/sandbox/ports.ts';
import { sleep } from '../../src/common/wait.ts';

export interface SoakRedis {
  readonly url: string;
  readonly port: number;
  pid(): number;
  /**
   * Stops the server (SIGTERM, or SIGKILL when `hard`) and starts it again on the same port and data dir;
   * `downMs` runs from the signal until the new server has loaded its AOF and serves commands.
   */
  restart(hard: boolean, signal?: AbortSignal): Promise<{ downMs: number }>;
  stop(): Promise<void>;
}

const STOP_TIMEOUT_MS = 10_000;

function spawn(dir: string, port: number, gen: number): Child {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes'];
  args.push('--maxmemory-policy', 'noeviction', '--daemonize', 'no');
  return startChild(`redis-${gen}`, 'redis-server', args, join(dir, 'redis.log'));
}

/** True once the server has finished loading its AOF (`INFO persistence` says `loading:0`). */
async function loaded(port: number): Promise<boolean> {
  return (await infoField(port, 'persistence', 'loading')) === '0';
}

/** Waits until the new server is ours (PID) and serves commands: INFO answers while the AOF loads, so both. */
async function ready(child: Child, port: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + 60_000;
  let exited: string | undefined;
  void child.exited.then((how) => (exited = how));
  for (;;) {
    if (exited !== undefined) throw new Error(`redis-server on port ${port} exited (${exited}); see ${child.logFile}`);
    if ((await answersAs(port, child.pid)) && (await loaded(port))) return;
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer in time`);
    await sleep(50, signal);
  }
}

export async function startSoakRedis(parent: string, signal?: AbortSignal): Promise<SoakRedis> {
  const dir = resolve(parent, 'soak-redis');
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  let gen = 0;
  let child = spawn(dir, port, gen);
  await ready(child, port, signal);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: () => child.pid,
    restart: async (hard, sig) => {
      const t0 = Date.now();
      if (hard) {
        process.kill(child.pid, 'SIGKILL');
        await child.exited;
      } else {
        await child.stop(STOP_TIMEOUT_MS);
      }
      // The port is ours: nothing else binds it in the moment between stop and start but, if something
      // did, the start fails loudly rather than talking to a stranger (answersAs checks the PID).
      child = spawn(dir, port, ++gen);
      await ready(child, port, sig);
      return { downMs: Date.now() - t0 };
    },
    stop: () => child.stop(STOP_TIMEOUT_MS),
  };
}
