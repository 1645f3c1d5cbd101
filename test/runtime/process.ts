import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import net from 'node:net';
import { sleep } from '../../src/common/wait.ts';
import { errorMessage } from '../../src/common/errors.ts';

/** A daemon the tests started; stopped by its PID only. */
export interface Daemon {
  readonly pid: number;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once (a crash, or a node losing power); resolves once the process has exited. */
  kill(): Promise<void>;
}

/** PIDs of daemons still running: killed when the test process exits, whatever the way it ends. */
const running = new Set<number>();
process.once('exit', () => {
  for (const pid of running) signalPid(pid, 'SIGKILL');
});

/** Signals one process by its PID; a process that has just exited is not an error. */
function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * Starts `command` with stdout and stderr appended to files (and, with `env`, that environment instead of
 * this process's); fails when it cannot be spawned.
 */
export async function startDaemon(
  command: string,
  args: string[],
  logs: { stdout: string; stderr: string },
  opts: { env?: NodeJS.ProcessEnv } = {},
): Promise<Daemon> {
  const out = openSync(logs.stdout, 'a');
  const err = openSync(logs.stderr, 'a');
  const child = spawn(command, args, { stdio: ['ignore', out, err], ...(opts.env ? { env: opts.env } : {}) });
  closeSync(out);
  closeSync(err);
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${command} did not start`);
  running.add(pid);
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(pid);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    pid,
    exited,
    stop(graceMs = 10_000): Promise<void> {
      stopping ??= (async () => {
        if (!running.has(pid)) return;
        signalPid(pid, 'SIGTERM');
        const timer = setTimeout(() => {
          if (running.has(pid)) signalPid(pid, 'SIGKILL');
        }, graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
    async kill(): Promise<void> {
      if (running.has(pid)) signalPid(pid, 'SIGKILL');
      await exited;
    },
  };
}

/**
 * Polls `probe` until it resolves true; fails early when the daemon exits, when `timeoutMs` passes or
 * when `signal` aborts. `what` names the wait in the error.
 */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean>,
  opts: { daemon: Daemon; timeoutMs: number; signal: AbortSignal; logHint: string },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let exit: number | string | undefined;
  void opts.daemon.exited.then((e) => (exit = e));
  let last = '';
  for (;;) {
    try {
      if (await probe()) return;
    } catch (err) {
      last = errorMessage(err);
    }
    if (exit !== undefined) throw new Error(`${what}: the process exited (${exit}); see ${opts.logHint}`);
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${opts.timeoutMs} ms (${last}); see ${opts.logHint}`);
    await sleep(100, opts.signal);
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}
