/**
 * `ebb watcher` / `ebb worker` as child processes for the soak: stdout (JSON logs) goes to a file and is
 * parsed on the way, counting warnings and errors by kind; memory is read from /proc (RSS) and from the
 * process's Prometheus endpoint (V8 heap used, prom-client's default metrics).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../harness/sandbox/paths.ts';
import { sleep } from '../../src/common/wait.ts';

const CLI = join(PROJECT_ROOT, 'src', 'cli', 'main.ts');

export type Role = 'watcher' | 'worker';

export interface Memory {
  rssBytes: number;
  heapUsedBytes: number;
}

export interface EbbChild {
  readonly name: string;
  readonly role: Role;
  readonly pid: number;
  readonly startedAt: number;
  /** Set once the child exits; `expected` when the soak killed or stopped it. */
  exit: { at: number; code: number | null; signal: NodeJS.Signals | null; expected: boolean } | undefined;
  port(signal?: AbortSignal): Promise<number>;
  memory(): Promise<Memory | undefined>;
  metrics(): Promise<string>;
  /** SIGKILL by PID (a crash, as the chaos tests do). */
  kill(): Promise<void>;
  /** SIGTERM by PID, SIGKILL after 15 s. */
  stop(): Promise<void>;
}

/** Warnings and errors of every child, by `role level msg [err.code or normalised err text]`. */
export class ErrorTally {
  readonly counts = new Map<string, number>();
  readonly firstSeen = new Map<string, string>();

  add(role: Role, line: Record<string, unknown>): void {
    const level = Number(line['level']);
    if (!(level >= 40)) return;
    const key = `${role} ${level >= 50 ? 'error' : 'warn'} "${String(line['msg'])}" ${errKind(line['err'])}`.trim();
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1 + Number(line['suppressed'] ?? 0));
    if (!this.firstSeen.has(key)) this.firstSeen.set(key, JSON.stringify(line).slice(0, 600));
  }

  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }
}

/** Numbers, hex ids and quoted names blurred, so one kind of error is counted once. */
const blur = (text: string): string =>
  text
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\b[0-9a-f]{8,}\b/g, '#')
    .replace(/\d+(\.\d+)?/g, '#')
    .slice(0, 100);

/** An error's kind: `[code] blurred message` (pino fields `err: {code, message}` or `err: "message"`). */
export function errKind(err: unknown): string {
  if (err === undefined || err === null) return '';
  if (typeof err === 'string') return `[${blur(err)}]`;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? `${e.code} ` : '';
  return `[${code}${blur(typeof e.message === 'string' ? e.message : JSON.stringify(err))}]`;
}

export function spawnEbbChild(role: Role, name: string, env: NodeJS.ProcessEnv, logDir: string, tally: ErrorTally): EbbChild {
  const proc: ChildProcess = spawn(process.execPath, [CLI, role], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (proc.pid === undefined) throw new Error(`${name}: could not spawn ${CLI}`);
  const pid = proc.pid;
  const out = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
  let port: number | undefined;
  let partial = '';
  let expected = false;
  proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out.write(chunk);
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const text of lines) {
      if (!text.startsWith('{')) continue;
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (line['msg'] === `${role} started` && typeof line['port'] === 'number') port = line['port'];
      tally.add(role, line);
    }
  });
  proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => out.write(`[stderr] ${chunk}`));
  const exited = new Promise<void>((resolve) => {
    proc.once('exit', (code, signal) => {
      self.exit = { at: Date.now(), code, signal, expected };
      out.end();
      resolve();
    });
  });
  const running = (): boolean => proc.exitCode === null && proc.signalCode === null;
  const metrics = async (): Promise<string> => {
    if (port === undefined) throw new Error(`${name}: no ops port yet`);
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) });
    return res.text();
  };
  const self: EbbChild = {
    name,
    role,
    pid,
    startedAt: Date.now(),
    exit: undefined,
    port: async (signal) => {
      const deadline = Date.now() + 60_000;
      while (port === undefined) {
        if (!running()) throw new Error(`${name} exited before it started; see ${name}.log`);
        if (Date.now() > deadline) throw new Error(`${name} did not log "${role} started" within 60 s`);
        await sleep(50, signal);
      }
      return port;
    },
    metrics,
    memory: async () => {
      if (!running() || port === undefined) return undefined;
      try {
        const status = await readFile(`/proc/${pid}/status`, 'utf8');
        const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN);
        const heap = Number(/^\w+_nodejs_heap_size_used_bytes (\S+)$/m.exec(await metrics())?.[1] ?? Number.NaN);
        return { rssBytes: rssKb * 1024, heapUsedBytes: heap };
      } catch {
        return undefined;
      }
    },
    kill: async () => {
      expected = true;
      if (running()) process.kill(pid, 'SIGKILL');
      await exited;
    },
    stop: async () => {
      expected = true;
      if (!running()) return;
      process.kill(pid, 'SIGTERM');
      const timer = setTimeout(() => running() && process.kill(pid, 'SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  return self;
}
