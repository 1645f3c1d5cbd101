import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';

/** A child process of the sandbox: output goes to a log file; it is stopped by its PID, never by name. */
export interface Child {
  name: string;
  pid: number;
  logFile: string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<string>;
  /**
   * SIGTERM, then SIGKILL at `timeoutMs` (default 10 s) or as soon as `killWhen` resolves, whichever comes
   * first; resolves once the process has exited.
   */
  stop(timeoutMs?: number, killWhen?: Promise<unknown>): Promise<void>;
}

export function startChild(name: string, command: string, args: string[], logFile: string, env?: NodeJS.ProcessEnv): Child {
  const out = createWriteStream(logFile, { flags: 'a' });
  // A process group of its own: Ctrl-C in a terminal signals the whole foreground group, and the sandbox's
  // servers must outlive the ebb processes that use them, which stop first (the sandbox stops them after, by PID).
  const proc: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...(env ? { env } : {}) });
  // Both streams share the file, so neither may end it; it is closed after the process exits.
  proc.stdout?.pipe(out, { end: false });
  proc.stderr?.pipe(out, { end: false });
  if (proc.pid === undefined) throw new Error(`${name}: cannot run ${command} (is it installed?)`);
  const exited = new Promise<string>((resolve) => {
    proc.once('exit', (code, signal) => resolve(signal ?? `exit code ${code ?? '?'}`));
    proc.once('error', (err) => resolve(`spawn error: ${err.message}`));
  });
  const pid = proc.pid;
  void exited.then(() => out.end());
  startReaper(pid);
  let stopping: Promise<void> | undefined;
  const stop = (timeoutMs = 10_000, killWhen?: Promise<unknown>): Promise<void> => {
    stopping ??= (async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const kill = (): void => void (proc.exitCode === null && proc.signalCode === null && proc.kill('SIGKILL'));
      const timer = setTimeout(kill, timeoutMs);
      void killWhen?.then(kill, () => undefined);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };
  return { name, pid, logFile, exited, stop };
}

/**
 * A tiny watcher that stops the child (by its PID) if this process dies without stopping it, so a crashed
 * or killed sandbox never leaves an apiserver behind. It exits by itself as soon as the child is gone.
 */
function startReaper(childPid: number): void {
  const script =
    'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; ' +
    'if kill -0 "$2" 2>/dev/null; then kill -TERM "$2"; sleep 10; kill -KILL "$2" 2>/dev/null; fi';
  const reaper = spawn('sh', ['-c', script, 'ebb-reaper', String(process.pid), String(childPid)], { stdio: 'ignore', detached: true });
  reaper.unref();
}
