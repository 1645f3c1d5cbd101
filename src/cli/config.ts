/** The CLI's process-level settings; the only CLI file that reads process.env. */
export interface CliConfig {
  logLevel: string;
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function cliConfig(env: NodeJS.ProcessEnv = process.env): CliConfig {
  const logLevel = env['EBB_LOG_LEVEL'] ?? 'info';
  if (!LEVELS.includes(logLevel)) throw new Error(`EBB_LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${logLevel}"`);
  return Object.freeze({ logLevel });
}

/** The environment the in-process `ebb run` hands to the watcher and worker config parsers. */
export function processEnv(): Record<string, string | undefined> {
  return { ...process.env };
}
