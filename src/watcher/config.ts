import { readQueueConfig, type QueueConfig } from '../queue/config-schema.ts';
import { ConfigError } from '../queue/errors.ts';
import { parseDuration } from '../common/duration.ts';
import { readKubeEnv, readLogLevel, readPort, type Env, type KubeEnv } from '../common/env.ts';
import type { BoardAuth } from './board.ts';

/** The watcher's configuration: parsed and validated once, frozen, passed down. */
export interface WatcherConfig {
  readonly queue: QueueConfig;
  /** Namespaces whose Apps are watched; empty = all namespaces. */
  readonly namespaces: readonly string[];
  /** Where the apiserver is (KUBECONFIG, or the in-cluster service settings). */
  readonly kube: KubeEnv;
  readonly httpAddress: string;
  readonly httpPort: number;
  /** Port of the KEDA external scaler (gRPC); undefined when switched off. */
  readonly scalerPort: number | undefined;
  /** A watch that delivers nothing (bookmarks included) for this long is re-opened. */
  readonly watchdogMs: number;
  readonly logLevel: string;
  /** Bull Board; undefined when disabled. */
  readonly board: { readonly basePath: string; readonly readOnly: boolean; readonly auth: BoardAuth } | undefined;
  /** Why the board is off although it was not switched off (shown once in the log). */
  readonly boardNote: string | undefined;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const WATCHER_ENV = {
  namespaces: 'EBB_NAMESPACES',
  httpAddress: 'EBB_HTTP_ADDRESS',
  httpPort: 'EBB_HTTP_PORT',
  watchdog: 'EBB_WATCHDOG',
  logLevel: 'EBB_LOG_LEVEL',
  scalerPort: 'EBB_SCALER_PORT',
  board: 'EBB_BOARD',
  boardPath: 'EBB_BOARD_PATH',
  boardReadOnly: 'EBB_BOARD_READ_ONLY',
  boardToken: 'EBB_BOARD_TOKEN',
  boardUser: 'EBB_BOARD_USER',
  boardPassword: 'EBB_BOARD_PASSWORD',
} as const;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

function readBool(env: Env, name: string, fallback: boolean, problems: string[]): boolean {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (['true', 'on', '1', 'yes'].includes(text)) return true;
  if (['false', 'off', '0', 'no'].includes(text)) return false;
  problems.push(`${name}: must be true or false (got "${text}")`);
  return fallback;
}

function boardAuth(env: Env, problems: string[]): BoardAuth {
  const E = WATCHER_ENV;
  const token = env[E.boardToken];
  const user = env[E.boardUser];
  const password = env[E.boardPassword];
  if (token) return { kind: 'token', token };
  if (user || password) {
    if (!user || !password) problems.push(`${E.boardUser} and ${E.boardPassword} must be set together`);
    return { kind: 'basic', user: user ?? '', password: password ?? '' };
  }
  return { kind: 'none' };
}

/**
 * Bull Board is on by default. Without credentials it is served only on a loopback address; elsewhere it
 * stays off (with a note) rather than exposing the queues unauthenticated.
 */
function readBoard(env: Env, httpAddress: string, problems: string[]): Pick<WatcherConfig, 'board' | 'boardNote'> {
  const E = WATCHER_ENV;
  if (!readBool(env, E.board, true, problems)) return { board: undefined, boardNote: undefined };
  const basePath = env[E.boardPath] ?? '/board';
  if (!/^\/[A-Za-z0-9._~/-]*[A-Za-z0-9._~-]$/.test(basePath)) problems.push(`${E.boardPath}: must be a URL path like /board (got "${basePath}")`);
  const auth = boardAuth(env, problems);
  if (auth.kind === 'none' && !LOOPBACK.test(httpAddress)) {
    return { board: undefined, boardNote: `Bull Board is off: set ${E.boardToken} (or ${E.boardUser}/${E.boardPassword}) to serve it on ${httpAddress}` };
  }
  return { board: { basePath, readOnly: readBool(env, E.boardReadOnly, true, problems), auth }, boardNote: undefined };
}

/** Pure parser; `loadWatcherConfig` feeds it process.env. Throws one ConfigError listing every problem. */
export function parseWatcherConfig(env: Env): WatcherConfig {
  const problems: string[] = [];
  const queue = readQueueConfig(env, problems);
  const namespaces = (env[WATCHER_ENV.namespaces] ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  for (const ns of namespaces) if (!DNS_LABEL.test(ns)) problems.push(`${WATCHER_ENV.namespaces}: "${ns}" is not a namespace name`);
  const httpPort = readPort(env, WATCHER_ENV.httpPort, 8080, problems);
  const watchdogText = env[WATCHER_ENV.watchdog] ?? '3m';
  const watchdogMs = parseDuration(watchdogText);
  if (watchdogMs === undefined || watchdogMs < 1000) problems.push(`${WATCHER_ENV.watchdog}: must be a duration of at least 1s, like 3m (got "${watchdogText}")`);
  const logLevel = readLogLevel(env, WATCHER_ENV.logLevel, problems);
  const httpAddress = env[WATCHER_ENV.httpAddress] ?? '0.0.0.0';
  const scalerPort = env[WATCHER_ENV.scalerPort] === 'off' ? undefined : readPort(env, WATCHER_ENV.scalerPort, 9090, problems);
  const board = readBoard(env, httpAddress, problems);
  if (problems.length > 0 || !queue) throw new ConfigError(problems);
  return Object.freeze({
    ...board,
    queue,
    namespaces: Object.freeze(namespaces),
    kube: readKubeEnv(env),
    httpAddress,
    httpPort,
    scalerPort,
    watchdogMs: watchdogMs ?? 180_000,
    logLevel,
  });
}

export function loadWatcherConfig(): WatcherConfig {
  return parseWatcherConfig(process.env);
}
