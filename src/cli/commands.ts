import { versionCommand } from './version.ts';
import { daemonCommand, watcherCommand, workerCommand } from './processes.ts';

export type Command = (args: string[]) => Promise<number>;

// The sandbox (control plane, simulated kubelets, CRI) is loaded only by the commands that start one.
const sandboxCommand: Command = async (args) => (await import('./sandbox.ts')).sandboxCommand(args);
const runAll: Command = async (args) => (await import('./run.ts')).runCommand(args);

const COMMANDS: Record<string, { run: Command; help: string }> = {
  sandbox: { run: sandboxCommand, help: 'sandbox up|down [--dir .sandbox] [--nodes 3]   local control plane + simulated nodes' },
  watcher: { run: watcherCommand, help: 'watcher                                      watch the apiserver, enqueue reconciles, run timers' },
  worker: { run: workerCommand, help: 'worker                                       reconcile queued objects' },
  daemon: { run: daemonCommand, help: "daemon                                       pull the images of this node's ImageList (one per node)" },
  run: { run: runAll, help: 'run --all [--dir .sandbox] [--nodes 3] [--sample]  everything in one process (development)' },
  version: { run: versionCommand, help: 'version                                      print the ebb version' },
};

function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  ebb ${c.help}`);
  return `usage:\n${lines.join('\n')}\n`;
}

/** Dispatches `ebb <command> ...`; returns the process exit code. Errors are printed, never thrown. */
export async function runCommand(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`ebb: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  try {
    return await cmd.run(rest);
  } catch (err) {
    process.stderr.write(`ebb ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
