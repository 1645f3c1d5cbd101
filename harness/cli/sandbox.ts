import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sleep } from '../../src/common/wait.ts';
import { untilSignal } from '../../src/cli/signals.ts';
import { DAEMONS_OPTION, devLogger, startLocalCluster } from './local.ts';
import { SANDBOX_OPTIONS, sandboxArgs } from './sandbox-options.ts';

interface SandboxArgs {
  dir: string;
  nodes: number;
  realNodes: number;
  daemons: boolean;
  positionals: string[];
}

function parse(args: string[]): SandboxArgs {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    allowNegative: true,
    options: { ...SANDBOX_OPTIONS, ...DAEMONS_OPTION },
  });
  return { ...sandboxArgs(values), daemons: values.daemons, positionals };
}

async function up(opts: SandboxArgs): Promise<number> {
  const log = devLogger('sandbox');
  const cluster = await startLocalCluster({ dir: opts.dir, nodes: opts.nodes, realNodes: opts.realNodes, daemons: opts.daemons, log });
  const { sandbox, daemons } = cluster;
  const pidFile = join(opts.dir, 'sandbox.pid');
  await writeFile(pidFile, String(process.pid));
  // Daemon lines are shell comments, so the output stays usable with `eval`.
  const daemonLines = [...(daemons?.daemons.values() ?? [])].map((d) => `# ebb daemon for ${d.node}: http://127.0.0.1:${d.httpPort}/metrics\n`);
  const registry = sandbox.real ? `export EBB_SANDBOX_REGISTRY=${sandbox.real.registry.host}\n` : '';
  const realLines = (sandbox.real?.nodes ?? []).map((n) => `# real node ${n.name}: pods in ${n.podSubnet}, reachable from this machine\n`);
  process.stdout.write(
    `ready\nexport KUBECONFIG=${sandbox.kubeconfig}\nexport EBB_REDIS_URL=${sandbox.redisUrl}\n${registry}${daemonLines.join('')}${realLines.join('')}`,
  );
  const sig = await untilSignal();
  log.info({ signal: sig }, 'stopping sandbox');
  await cluster.stop();
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
  const opts = parse(args);
  switch (opts.positionals[0]) {
    case 'up':
      return up(opts);
    case 'down':
      return down(opts.dir);
    default:
      process.stderr.write('usage: harness sandbox up|down [--dir .sandbox] [--nodes 3] [--real-nodes 0..4] [--no-daemons]\n');
      return 2;
  }
}
