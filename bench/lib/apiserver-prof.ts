/**
 * A CPU profile of the sandbox's kube-apiserver (its `/debug/pprof/profile`, served when the sandbox starts it
 * with `--profiling`), taken with kubectl for `seconds` and written where `go tool pprof` reads it.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_BIN_DIR } from '../../harness/sandbox/paths.ts';

const run = promisify(execFile);

/** Profiles the apiserver for `seconds` into `file`; resolves with the file, or with why it could not. */
export async function profileApiserver(kubeconfig: string, seconds: number, file: string): Promise<string> {
  try {
    const { stdout } = await run(join(DEFAULT_BIN_DIR, 'kubectl'), ['--kubeconfig', kubeconfig, 'get', '--raw', `/debug/pprof/profile?seconds=${seconds}`], {
      encoding: 'buffer',
      maxBuffer: 256 * 1024 * 1024,
      timeout: (seconds + 60) * 1_000,
    });
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, stdout);
    return file;
  } catch (err) {
    return `no profile: ${err instanceof Error ? err.message : String(err)}`;
  }
}
