import { rolloutsPathFor } from '../watcher/rollouts/path.ts';
import { parseArgs } from 'node:util';
import { createLogger, type Logger } from '../common/log.ts';
import type { BoardAuth } from '../watcher/board.ts';
import { startWatcher } from '../watcher/watcher.ts';
import { workerReconcilers } from '../workers/reconcilers.ts';
import { startWorker } from '../workers/worker.ts';
import { cliConfig, parseRunConfig, processEnv } from './config.ts';
import { logCrashes, stopWithin, untilSignal, WATCHER_STOP_DEADLINE_MS, WORKER_STOP_MARGIN_MS } from './signals.ts';

type Env = Record<string, string | undefined>;

/** The watcher and a worker running in this process. */
export interface RunningAll {
  /** Where the HTTP endpoints (Bull Board, metrics) can be reached from this machine. */
  host: string;
  watcherPort: number;
  workerPort: number;
  /** Bull Board's path and how to log in (undefined: no credentials needed); undefined when it is off. */
  board: { path: string; login: string | undefined } | undefined;
  /** Why the board is off although it was not switched off. */
  boardNote: string | undefined;
  /** The longest a clean stop may take (the worker's wait for running reconciles, then the watcher's). */
  stopDeadlineMs: number;
  stop(): Promise<void>;
}

/** How to log in to Bull Board, naming where the secret is without showing it. */
export function boardLogin(auth: BoardAuth): string | undefined {
  switch (auth.kind) {
    case 'none':
      return undefined;
    case 'basic':
      return `user ${auth.user}, password of EBB_BOARD_PASSWORD`;
    case 'token':
      return 'Bearer token of EBB_BOARD_TOKEN (or HTTP Basic, any user, the token as password)';
    case 'kubernetes':
      return `Bearer token of a user allowed to get ${auth.access.resource}${auth.access.group ? `.${auth.access.group}` : ''} (kubectl create token; or HTTP Basic, any user, the token as password)`;
  }
}

/**
 * Starts the watcher and a worker in this process, both configured from `env` (KUBECONFIG, EBB_REDIS_URL and
 * the rest of their settings). The worker's HTTP server takes a free port so that it never clashes with the
 * watcher's.
 */
export async function startAll(env: Env, log: Logger): Promise<RunningAll> {
  const cfg = parseRunConfig(env);
  const watcher = await startWatcher(cfg.watcher, log.child({ process: 'watcher' }));
  const set = workerReconcilers(cfg.worker);
  const worker = await startWorker(cfg.worker, log.child({ process: 'worker' }), set.byKind, set.drain).catch(async (err: unknown) => {
    await watcher.stop();
    throw err;
  });
  const address = env['EBB_HTTP_ADDRESS'];
  return {
    host: address === undefined || address === '0.0.0.0' ? '127.0.0.1' : address,
    watcherPort: watcher.httpPort,
    workerPort: worker.httpPort,
    board: cfg.watcher.board ? { path: cfg.watcher.board.basePath, login: boardLogin(cfg.watcher.board.auth) } : undefined,
    boardNote: cfg.watcher.boardNote,
    stopDeadlineMs: cfg.worker.shutdownTimeoutMs + WORKER_STOP_MARGIN_MS + WATCHER_STOP_DEADLINE_MS + watcher.workerThreadStopMs,
    stop: async () => {
      await worker.stop();
      await watcher.stop();
    },
  };
}

/** What `ebb run --all` prints once everything runs; `notes` are extra lines before the last one. */
export function runningBanner(all: RunningAll, env: Env, notes: string[] = []): string {
  const { host, board } = all;
  const boardLine = board
    ? `  Bull Board:  http://${host}:${all.watcherPort}${board.path}${board.login ? ` (${board.login})` : ''}`
    : `  Bull Board:  off${all.boardNote ? ` (${all.boardNote})` : ''}`;
  const rolloutsLine = board ? `  Rollouts:    http://${host}:${all.watcherPort}${rolloutsPathFor(board.path)}/ (same login)` : undefined;
  const lines = [
    'ebb is running',
    env['KUBECONFIG'] ? `  KUBECONFIG=${env['KUBECONFIG']}` : undefined,
    boardLine,
    rolloutsLine,
    `  metrics:     http://${host}:${all.watcherPort}/metrics (watcher), http://${host}:${all.workerPort}/metrics (worker)`,
    ...notes,
    '  Ctrl-C stops everything',
  ];
  return `${lines.filter(Boolean).join('\n')}\n`;
}

function parseRunArgs(args: string[]): void {
  const { values } = parseArgs({ args, options: { all: { type: 'boolean', default: false } } });
  if (!values.all) throw new Error('only `ebb run --all` is supported: it runs the watcher and a worker in one process');
}

/**
 * `ebb run --all`: the watcher and a worker in one process, against the cluster and Redis that KUBECONFIG and
 * EBB_REDIS_URL name. Runs until SIGINT/SIGTERM.
 */
export async function runCommand(args: string[]): Promise<number> {
  parseRunArgs(args);
  const cli = cliConfig();
  const log = createLogger('ebb', cli.logLevel, cli.logFormat);
  logCrashes(log);
  const env = processEnv();
  const all = await startAll(env, log);
  process.stdout.write(runningBanner(all, env));
  const sig = await untilSignal();
  log.info({ signal: sig }, 'shutting down');
  // A Redis that went away first must not leave `make run` hanging on Ctrl-C.
  return stopWithin(() => all.stop(), all.stopDeadlineMs, log);
}
