import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sleep } from '../../src/common/wait.ts';
import { createLogger } from '../../src/common/log.ts';
import { startSandbox } from '../sandbox/sandbox.ts';
import { cliConfig } from '../../src/cli/config.ts';
import { untilSignal } from '../../src/cli/signals.ts';
import { SANDBOX_OPTIONS, sandboxArgs } from './sandbox-options.ts';

function parse(args: string[]): { dir: string; nodes: number; positionals: string[] } {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: SANDBOX_OPTIONS,
  });
  return { ...sandboxArgs(values), positionals };
}

async function up(dir: string, nodes: number): Promise<number> {
  const log = createLogger('sandbox', cliConfig().logLevel);
  const sandbox = await startSandbox({ dir, nodes, log });
  const pidFile = join(dir, 'sandbox.pid');
  await writeFile(pidFile, String(process.pid));
  process.stdout.write(`ready\nexport KUBECONFIG=${sandbox.kubeconfig}\nexport EBB_REDIS_URL=${sandbox.redisUrl}\n`);
  const sig = await untilSignal();
  log.info({ signal: sig }, 'stopping sandbox');
  await sandbox.stop();
  await rm(pidFile, { force: true });
  return 0;
}

/** Stops a sandbox started by `sandbox up` in the same --dir, by the PID it recorded. */
async function down(dir: string): Promise<number> {
  const pidFile = join(dir, 'sandbox.pid');
  const pid = Number(await readFile(pidFile, 'utf8').catch(() => ''));
  if (!Number.isInteger(pid) || pid <= 0) {
    process.stderr.write(`no running sandbox recorded in ${pidFile}\n`);
    return 1;
  }
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    await rm(pidFile, { force: true });
    process.stderr.write(`sandbox process ${pid} is not running; removed stale ${pidFile}\n`);
    return 0;
  }
  for (let i = 0; i < 300; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      process.stdout.write('stopped\n');
      return 0;
    }
    await sleep(100);
  }
  process.stderr.write(`sandbox process ${pid} did not stop within 30 s\n`);
  return 1;
}

export async function sandboxCommand(args: string[]): Promise<number> {
  const { dir, nodes, positionals } = parse(args);
  switch (positionals[0]) {
    case 'up':
      return up(dir, nodes);
    case 'down':
      return down(dir);
    default:
      process.stderr.write('usage: harness sandbox up|down [--dir .sandbox] [--nodes 3]\n');
      return 2;
  }
}
