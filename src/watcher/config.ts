import { parseQueueConfig, type QueueConfig } from '../queue/config-schema.ts';
import { ConfigError } from '../queue/errors.ts';
import { parseDuration } from '../queue/duration.ts';
import { readLogLevel, readPort, type Env } from '../common/env.ts';

/** The watcher's configuration: parsed and validated once, frozen, passed down. */
export interface WatcherConfig {
  readonly queue: QueueConfig;
  /** Namespaces whose Apps are watched; empty = all namespaces. */
  readonly namespaces: readonly string[];
  readonly kubeconfig: string | undefined;
  readonly httpAddress: string;
  readonly httpPort: number;
  /** A watch that delivers nothing (bookmarks included) for this long is re-opened. */
  readonly watchdogMs: number;
  readonly logLevel: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const WATCHER_ENV = {
  namespaces: 'EBB_NAMESPACES',
  httpAddress: 'EBB_HTTP_ADDRESS',
  httpPort: 'EBB_HTTP_PORT',
  watchdog: 'EBB_WATCHDOG',
  logLevel: 'EBB_LOG_LEVEL',
} as const;

/** Pure parser; `loadWatcherConfig` feeds it process.env. Throws one ConfigError listing every problem. */
export function parseWatcherConfig(env: Env): WatcherConfig {
  const problems: string[] = [];
  let queue: QueueConfig | undefined;
  try {
    queue = parseQueueConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) problems.push(...err.problems);
    else throw err;
  }
  const namespaces = (env[WATCHER_ENV.namespaces] ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  for (const ns of namespaces) if (!DNS_LABEL.test(ns)) problems.push(`${WATCHER_ENV.namespaces}: "${ns}" is not a namespace name`);
  const httpPort = readPort(env, WATCHER_ENV.httpPort, 8080, problems);
  const watchdogText = env[WATCHER_ENV.watchdog] ?? '3m';
  const watchdogMs = parseDuration(watchdogText);
  if (watchdogMs === undefined || watchdogMs < 1000) problems.push(`${WATCHER_ENV.watchdog}: must be a duration of at least 1s, like 3m (got "${watchdogText}")`);
  const logLevel = readLogLevel(env, WATCHER_ENV.logLevel, problems);
  if (problems.length > 0 || !queue) throw new ConfigError(problems);
  return Object.freeze({
    queue,
    namespaces: Object.freeze(namespaces),
    kubeconfig: env['KUBECONFIG'] || undefined,
    httpAddress: env[WATCHER_ENV.httpAddress] ?? '0.0.0.0',
    httpPort,
    watchdogMs: watchdogMs ?? 180_000,
    logLevel,
  });
}

export function loadWatcherConfig(): WatcherConfig {
  return parseWatcherConfig(process.env);
}
