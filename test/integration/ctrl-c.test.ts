/**
 * Ctrl-C as a terminal sends it (SIGINT to the whole foreground process group) stops `run --all` (what `make run`
 * starts) and `sandbox up` (what `make sandbox` starts) cleanly: ebb's processes stop while the sandbox's Redis and
 * apiserver still answer, the command exits 0 without giving up on a stop, prints no raw error objects, and
 * leaves none of its servers running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../harness/sandbox/paths.ts';
import { waitFor } from '../../src/common/wait.ts';
import { alive, descendants } from '../processes.ts';

interface Run {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** The development CLI in a process group of its own, as a shell starts a foreground job. */
function start(args: string[]): Run {
  const proc = spawn(process.execPath, [join(PROJECT_ROOT, 'harness/cli/main.ts'), ...args], {
    cwd: PROJECT_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, EBB_LOG_LEVEL: 'info', EBB_HTTP_PORT: '0' },
  });
  let text = '';
  proc.stdout?.on('data', (d: Buffer) => (text += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return { proc, output: () => text, exited };
}

async function ctrlC(args: string[], ready: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-cc-'));
  const signal = AbortSignal.timeout(400_000);
  const run = start([...args, '--dir', dir, '--nodes', '1']);
  try {
    await waitFor(() => Promise.resolve(run.output().includes(ready) ? true : undefined), { timeoutMs: 300_000, intervalMs: 250, signal, what: ready });
    const pid = run.proc.pid ?? 0;
    const servers = descendants(pid);
    expect(servers.length, 'the sandbox runs servers of its own').toBeGreaterThan(2);
    process.kill(-pid, 'SIGINT');
    expect(await run.exited, run.output().slice(-3000)).toBe(0);
    expect(run.output()).not.toContain('did not stop cleanly');
    expect(run.output(), 'no raw error object printed').not.toMatch(/^(Error: |\s+at )/m);
    await waitFor(() => Promise.resolve(servers.some(alive) ? undefined : true), { timeoutMs: 30_000, intervalMs: 250, signal, what: 'every server gone' });
  } finally {
    if (run.proc.exitCode === null && run.proc.pid !== undefined) process.kill(-run.proc.pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

describe.concurrent('Ctrl-C', () => {
  it('stops run --all (make run) cleanly', async () => {
    await ctrlC(['run', '--all', '--sample'], 'Ctrl-C stops everything');
  }, 420_000);

  it('stops sandbox up (make sandbox) cleanly', async () => {
    await ctrlC(['sandbox', 'up'], 'ready\nexport KUBECONFIG');
  }, 420_000);
});
