/** Runs `ebb queue ...` as an operator would: the real CLI as a child process, with the watcher's settings. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import type { Status } from '../../../src/queue/status.ts';

const CLI = join(PROJECT_ROOT, 'src', 'cli', 'main.ts');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `ebb queue <args>` with exactly `env` (plus PATH); resolves with its exit code and output. */
export function ebbQueue(args: string[], env: Record<string, string>, signal: AbortSignal = AbortSignal.timeout(30_000)): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, 'queue', ...args],
      { cwd: PROJECT_ROOT, env: { PATH: process.env['PATH'] ?? '', ...env }, signal },
      (err, stdout, stderr) => {
        // A number is the exit code; anything else (not started, aborted) is a failure of the test itself.
        const code = err ? err.code : 0;
        if (typeof code === 'number') resolve({ code, stdout, stderr });
        else reject(new Error(`ebb queue ${args.join(' ')} did not run: ${err?.message ?? ''}`));
      },
    );
  });
}

/** `ebb queue <args>` that must succeed; its stdout. */
export async function ebbQueueOk(args: string[], env: Record<string, string>): Promise<string> {
  const r = await ebbQueue(args, env);
  if (r.code !== 0) throw new Error(`ebb queue ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** `ebb queue status --json`, parsed. */
export async function queueStatus(env: Record<string, string>): Promise<Status> {
  return JSON.parse(await ebbQueueOk(['status', '--json'], env)) as Status;
}

/** The settings `ebb queue` needs to find a test's queues. */
export function queueEnv(redisUrl: string, prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return { EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix, ...extra };
}
