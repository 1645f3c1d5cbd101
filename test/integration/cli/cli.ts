/** Runs the ebb CLI (or kubectl with the ebb plugin on PATH) as a child process against the sandbox. */
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sandbox } from '../support.ts';

export const MAIN = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));
const PLUGIN = fileURLToPath(new URL('../../../src/cli/kubectl-ebb.ts', import.meta.url));
export const KUBECTL = fileURLToPath(new URL('../../../bin/kubectl', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a user of the sandbox: its kubeconfig, and node on PATH. */
export function cliEnv(extraPath?: string): NodeJS.ProcessEnv {
  const path = [extraPath, dirname(process.execPath), process.env['PATH']].filter((p) => p !== undefined).join(':');
  return { PATH: path, HOME: process.env['HOME'], KUBECONFIG: sandbox().kubeconfig };
}

/** Runs `file args` to its end, stdout and stderr piped (so not a terminal). */
export function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv = cliEnv(), onStdout?: (text: string) => void): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      onStdout?.(stdout);
    });
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `ebb <args>` as a user runs it. */
export const ebb = (args: readonly string[], onStdout?: (text: string) => void): Promise<CliResult> =>
  run(process.execPath, [MAIN, ...args], cliEnv(), onStdout);

/** A folder holding `kubectl-ebb` (the plugin entry, an executable file in the repository), to put first on PATH as the README says. */
export async function pluginDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kubectl-ebb-'));
  await symlink(PLUGIN, join(dir, 'kubectl-ebb'));
  return dir;
}

/** A tmux server of the test's own (its own socket), so nothing else's sessions are touched. */
export class Tmux {
  private readonly socket = `ebb-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  private async tmux(...args: string[]): Promise<string> {
    const { stdout } = await promisify(execFile)('tmux', ['-L', this.socket, ...args], { env: { ...process.env, TMUX: '' } });
    return stdout;
  }

  /** A detached session `cols`×`rows` running `command` in a shell, with `env` (a terminal: stdout is a TTY). */
  async start(session: string, command: string, env: Record<string, string>, cols = 220, rows = 24): Promise<void> {
    const vars = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    await this.tmux('new-session', '-d', '-s', session, '-x', String(cols), '-y', String(rows), ...vars, command);
  }

  /** The visible text of the session's pane. */
  capture(session: string): Promise<string> {
    return this.tmux('capture-pane', '-p', '-t', session);
  }

  async stop(): Promise<void> {
    await this.tmux('kill-server').catch(() => undefined);
  }
}
