/**
 * The README's configuration reference, generated from every process's settings table. `make config-docs`
 * (hack/gen-config-docs.ts) writes it between the markers; a unit test fails when README.md differs.
 */
import { renderSettingsReference, type ProcessEntries } from '../common/settings-docs.ts';
import { DAEMON_SETTINGS } from '../daemon/config.ts';
import { WATCHER_SETTINGS } from '../watcher/config.ts';
import { WORKER_SETTINGS } from '../workers/config.ts';
import { CLI_SETTINGS } from './config.ts';

export const CONFIG_BEGIN = '<!-- config:begin -->';
export const CONFIG_END = '<!-- config:end -->';

/** The processes in the order the reference lists them; `cli` is `ebb sandbox` and `ebb run --all`. */
export const PROCESS_SETTINGS: readonly ProcessEntries[] = [
  { process: 'watcher', entries: WATCHER_SETTINGS.entries },
  { process: 'worker', entries: WORKER_SETTINGS.entries },
  { process: 'daemon', entries: DAEMON_SETTINGS.entries },
  { process: 'cli', entries: CLI_SETTINGS.entries },
];

/** What goes between the markers. */
export function renderConfigReference(): string {
  return `\n<!-- generated from the settings tables in src/*/config.ts by \`make config-docs\`: do not edit by hand -->\n\n${renderSettingsReference(PROCESS_SETTINGS)}\n`;
}

/** `readme` with the region between the markers replaced by the generated reference. */
export function withConfigReference(readme: string): string {
  const begin = readme.indexOf(CONFIG_BEGIN);
  const end = readme.indexOf(CONFIG_END);
  if (begin < 0 || end < begin) throw new Error(`README.md must contain ${CONFIG_BEGIN} followed by ${CONFIG_END}`);
  return `${readme.slice(0, begin + CONFIG_BEGIN.length)}${renderConfigReference()}${readme.slice(end)}`;
}
