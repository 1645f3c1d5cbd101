import type { LogLevel } from '../common/log.ts';
import { LOG_SETTINGS } from '../common/process-settings.ts';
import { frozen, parseAll, parseSettings, table, type Env } from '../common/settings.ts';
import { parseWatcherConfig, type WatcherConfig } from '../watcher/config.ts';
import { parseWorkerConfig, type WorkerConfig } from '../workers/config.ts';

/** The CLI's own settings (`ebb run`, and the development CLI in harness/); the only CLI file that reads process.env. */
export interface CliConfig {
  readonly logLevel: LogLevel;
}

/** What the CLI reads itself; `ebb run --all` also reads everything the watcher and the worker read. */
export const CLI_SETTINGS = table({ ...LOG_SETTINGS.entries });

export function cliConfig(env: Env = process.env): CliConfig {
  return frozen({ logLevel: parseSettings(CLI_SETTINGS, env).logLevel });
}

/** The environment the in-process `ebb run` hands to the watcher and worker config parsers. */
export function processEnv(): Record<string, string | undefined> {
  return { ...process.env };
}

/**
 * `ebb run --all`: the watcher's and the worker's configuration from one environment, with one ConfigError
 * listing the problems of both. The worker's HTTP server takes any free port (the watcher's has the
 * configured one).
 */
export function parseRunConfig(env: Env): { readonly watcher: WatcherConfig; readonly worker: WorkerConfig } {
  const [watcher, worker] = parseAll<[WatcherConfig, WorkerConfig]>(
    () => parseWatcherConfig(env),
    () => parseWorkerConfig({ ...env, EBB_HTTP_PORT: '0' }),
  );
  return Object.freeze({ watcher, worker });
}
