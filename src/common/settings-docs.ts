/** Renders the configuration reference (a Markdown table) from the processes' settings tables. */
import type { Entries, Setting } from './settings.ts';

/** One process and the entries of its settings table. */
export interface ProcessEntries {
  readonly process: string;
  readonly entries: Entries;
}

const code = (text: string): string => `\`${text}\``;

function defaultText(s: Setting): string {
  if (s.defaultDoc !== undefined) return s.defaultDoc;
  if (s.required) return 'required';
  if (s.type === 'list' || s.default === undefined) return 'unset';
  return code(String(s.default));
}

/** The accepted values, when the type says more than the doc does. */
function allowed(s: Setting): string | undefined {
  switch (s.type) {
    case 'int':
      return `${s.min} to ${s.max}`;
    case 'duration':
      return s.zeroDisables ? `${code('0')} = off, or ${s.min} to ${s.max}` : `${s.min} to ${s.max}`;
    case 'switch':
      return `${code('true')} or ${code('false')}`;
    case 'enum':
      return s.values.map(code).join(', ');
    default:
      return undefined;
  }
}

function secrecy(s: Setting): string | undefined {
  if (!s.secret) return undefined;
  return s.type === 'url' ? 'its password is never shown' : 'never shown';
}

function meaning(s: Setting): string {
  return [s.doc, allowed(s), secrecy(s)].filter((x) => x !== undefined).join('; ');
}

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

interface Row {
  readonly setting: Setting;
  readonly processes: string[];
}

/**
 * One row per variable, in the order the processes declare them, naming every process that reads it ("all"
 * when every one does). A variable read by several processes must be the same declaration in each.
 */
export function renderSettingsReference(processes: readonly ProcessEntries[]): string {
  const rows = new Map<string, Row>();
  for (const { process, entries } of processes) {
    for (const setting of Object.values(entries)) {
      const row = rows.get(setting.name);
      if (row === undefined) rows.set(setting.name, { setting, processes: [process] });
      else if (row.setting !== setting)
        throw new Error(`settings tables: ${setting.name} is declared differently by ${row.processes.join(', ')} and ${process}`);
      else if (!row.processes.includes(process)) row.processes.push(process);
    }
  }
  const lines = ['| variable | default | read by | meaning |', '|---|---|---|---|'];
  for (const { setting, processes: readers } of rows.values()) {
    const by = readers.length === processes.length ? 'all' : readers.join(', ');
    lines.push(`| ${cell(code(setting.name))} | ${cell(defaultText(setting))} | ${by} | ${cell(meaning(setting))} |`);
  }
  return `${lines.join('\n')}\n`;
}
