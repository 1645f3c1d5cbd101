import { versionCommand } from './version.ts';
import { daemonCommand, watcherCommand, workerCommand } from './processes.ts';
import { errorMessage } from '../common/errors.ts';
import { printable } from './printable.ts';
import { UsageError } from './usage.ts';

export type Command = (args: string[]) => Promise<number>;

export interface CommandSpec {
  run: Command;
  /** One usage line, after the program name. */
  help: string;
  /** The flags it accepts (`--all`); none when absent. The manifests in deploy/ pass no others (a unit test checks). */
  flags?: readonly string[];
}

// `ebb run` loads the watcher and the worker together only when it runs.
const runAll: Command = async (args) => (await import('./run.ts')).runCommand(args);
// `ebb queue` loads BullMQ and nothing of the processes.
const queue: Command = async (args) => (await import('./queue/command.ts')).queueCommand(args);
// `ebb rollout` loads the kube client and nothing of the queues.
const rollout: Command = async (args) => (await import('./rollout/command.ts')).rolloutCommand(args);
// `ebb set` loads the kube client only.
const set: Command = async (args) => (await import('./set/command.ts')).setCommand(args);

/** The commands of `ebb`. */
export const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  watcher: { run: watcherCommand, help: 'watcher                                      watch the apiserver, enqueue reconciles, run timers' },
  worker: { run: workerCommand, help: 'worker                                       reconcile queued objects' },
  daemon: { run: daemonCommand, help: "daemon                                       pull the images of this node's ImageList (one per node)" },
  run: { run: runAll, flags: ['--all'], help: 'run --all                                    watcher and worker in one process' },
  queue: {
    run: queue,
    help: 'queue status|pause|resume|concurrency|rate-limit|retry-failed  inspect and steer the queues (`ebb queue help`)',
  },
  rollout: {
    run: rollout,
    help: "rollout status|explain|pause|resume|undo|history|restart|abort|retry|promote app/NAME  follow, explain and steer an App's rollout (`ebb rollout help`)",
  },
  set: { run: set, help: "set image app/NAME CONTAINER=IMAGE ...         change only the named containers' images (`ebb set help`)" },
  version: { run: versionCommand, help: 'version                                      print the ebb version' },
};

function usage(program: string, commands: Record<string, CommandSpec>): string {
  const lines = Object.values(commands).map((c) => `  ${program} ${c.help}`);
  return `usage:\n${lines.join('\n')}\n`;
}

/** Dispatches `<program> <command> ...` over `commands`; returns the process exit code. Errors are printed, never thrown. */
export async function dispatch(program: string, commands: Record<string, CommandSpec>, argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(usage(program, commands));
    return name ? 0 : 2;
  }
  const cmd = commands[name];
  if (!cmd) {
    process.stderr.write(`${program}: unknown command "${name}"\n${usage(program, commands)}`);
    return 2;
  }
  try {
    return await cmd.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${program} ${name}: ${err.message}\n${err.usage}`);
      return 2;
    }
    // An error may quote the cluster's or Redis's text (an admission message, a job's data).
    process.stderr.write(`${program} ${name}: ${printable(errorMessage(err), { keepNewlines: true })}\n`);
    return 1;
  }
}

/**
 * Dispatches `ebb <command> ...` (or, installed as the kubectl plugin `kubectl-ebb`, `kubectl ebb <command> ...`);
 * returns the process exit code. Errors are printed, never thrown.
 */
export function runCommand(argv: string[], program = 'ebb'): Promise<number> {
  return dispatch(program, COMMANDS, argv);
}
