/**
 * `ebb daemon` as its own process, configured from the environment as the DaemonSet configures it, with
 * everything it writes (stdout and stderr) kept in a file the test reads.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../../src/common/wait.ts';
import { startDaemon, type Daemon } from '../../runtime/process.ts';

const MAIN = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));

export type LogLine = Record<string, unknown> & { msg?: string };

export interface EbbDaemon {
  readonly child: Daemon;
  /** The port of /healthz, /readyz and /metrics. */
  readonly port: number;
  /** Everything the process wrote so far, as written. */
  output(): Promise<string>;
  /** Its JSON log lines so far (a line that is not JSON becomes `{ msg: line }`). */
  lines(): Promise<LogLine[]>;
  /** Waits for a log line with this message (and `match`). */
  logged(msg: string, match?: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  get(path: '/readyz' | '/healthz' | '/metrics'): Promise<{ status: number; body: string }>;
  /** A metric sample's value, or undefined when /metrics has no such sample. */
  metric(sample: string): Promise<number | undefined>;
}

/** Starts `node src/cli/main.ts daemon` with `env` (and PATH); resolves once it logs `daemon started`. */
export async function startEbbDaemon(env: Record<string, string>, logPath: string, signal: AbortSignal): Promise<EbbDaemon> {
  const child = await startDaemon(
    process.execPath,
    [MAIN, 'daemon'],
    { stdout: logPath, stderr: logPath },
    { env: { PATH: process.env['PATH'] ?? '', ...env } },
  );
  const output = (): Promise<string> => readFile(logPath, 'utf8');
  const lines = async (): Promise<LogLine[]> =>
    (await output())
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        try {
          return JSON.parse(l) as LogLine;
        } catch {
          return { msg: l };
        }
      });
  const logged = (msg: string, match: (l: LogLine) => boolean = () => true, timeoutMs = 30_000): Promise<LogLine> =>
    waitFor(async () => (await lines()).find((l) => l.msg === msg && match(l)), { timeoutMs, intervalMs: 100, signal, what: `daemon log "${msg}"` });

  let exit: number | string | undefined;
  void child.exited.then((e) => (exit = e));
  const started = await waitFor(
    async () => {
      if (exit !== undefined) throw new Error(`ebb daemon exited (${exit}) before it started: ${(await output()).slice(-2_000)}`);
      return (await lines()).find((l) => l.msg === 'daemon started');
    },
    { timeoutMs: 30_000, intervalMs: 100, signal, what: 'ebb daemon to start' },
  );
  const port = started['port'] as number;
  const get = async (path: string): Promise<{ status: number; body: string }> => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal });
    return { status: res.status, body: await res.text() };
  };
  return {
    child,
    port,
    output,
    lines,
    logged,
    get,
    async metric(sample) {
      const { body } = await get('/metrics');
      const line = body.split('\n').find((l) => l.startsWith(`${sample} `));
      return line === undefined ? undefined : Number(line.slice(sample.length + 1));
    },
  };
}
