import type { LogLevel } from '../common/log.ts';
import { LOG_FORMATS, type LogFormat } from '../common/log-format.ts';
import { LOG_SETTINGS } from '../common/process-settings.ts';
import { frozen, parseAll, parseSettings, table, type Env } from '../common/settings.ts';
import { parseWatcherConfig, type WatcherConfig } from '../watcher/config.ts';
import { parseWorkerConfig, type WorkerConfig } from '../workers/config.ts';

/** The CLI's own settings (`ebb run`, and the development CLI in harness/); the only CLI file that reads process.env. */
export interface CliConfig {
  readonly logLevel: LogLevel;
  /** How every process writes its log lines (`EBB_LOG_FORMAT`): the commands read it here, with the level. */
  readonly logFormat: LogFormat;
}

/**
 * What the CLI reads itself; `ebb run --all` also reads everything the watcher and the worker read. The log
 * format is read only here: `ebb run` and the development CLI may print readable lines, while `ebb watcher`,
 * `ebb worker` and `ebb daemon` (the processes of a cluster) always write JSON lines.
 */
export const CLI_SETTINGS = table({
  ...LOG_SETTINGS.entries,
  logFormat: {
    name: 'EBB_LOG_FORMAT',
    type: 'enum',
    values: LOG_FORMATS,
    default: 'json',
    doc: 'how `ebb run` writes its log lines: `json` (one object a line, for log collectors) or `pretty` (`HH:MM:SS level component msg key=value`, for a terminal; `make run` and `make sandbox` default to it); `ebb watcher`, `ebb worker` and `ebb daemon` always write JSON',
  },
});

export function cliConfig(env: Env = process.env): CliConfig {
  const v = parseSettings(CLI_SETTINGS, env);
  return frozen({ logLevel: v.logLevel, logFormat: v.logFormat });
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
