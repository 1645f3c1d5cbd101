/**
 * Readable log lines for development (`EBB_LOG_FORMAT=pretty`): each pino JSON line becomes
 * `HH:MM:SS level component msg key=value ...`. A cluster keeps the JSON lines (the default), which log
 * collectors parse; this is for a person reading a terminal. Pure: `formatLogLine` maps one line to one line.
 */

/** How a process writes its log lines: JSON (the default), or readable lines for a terminal. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const LEVELS: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** Fields every line has that the prefix already shows, or that say nothing to a person at a terminal. */
const SHOWN = new Set(['time', 'level', 'msg', 'component', 'process', 'pid', 'hostname']);

const two = (n: number): string => String(n).padStart(2, '0');

function clock(ms: unknown, utc: boolean): string {
  if (typeof ms !== 'number') return '--:--:--';
  const d = new Date(ms);
  return utc
    ? `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`
    : `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** A value as `key=value` shows it: plain words bare, text with spaces or quotes quoted, objects as JSON. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  return JSON.stringify(value);
}

/**
 * One pino JSON line as `HH:MM:SS level component msg key=value ...` (the time in local time unless `utc`).
 * The component is the child logger's `process` when there is one (watcher and worker in one process), else
 * the logger's `component`. A line that is not a JSON object is returned as it is.
 */
export function formatLogLine(line: string, opts: { utc?: boolean } = {}): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return line;
  const e = entry as Record<string, unknown>;
  const level = typeof e['level'] === 'number' ? (LEVELS[e['level']] ?? String(e['level'])) : formatValue(e['level'] ?? '-');
  const component = formatValue(e['process'] ?? e['component'] ?? '-');
  const fields = Object.entries(e)
    .filter(([k, v]) => !SHOWN.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${formatValue(v)}`);
  const msg = typeof e['msg'] === 'string' ? e['msg'] : '';
  return [clock(e['time'], opts.utc === true), level.padEnd(5), component, msg, ...fields].filter((s) => s !== '').join(' ');
}

/** A pino destination that writes each line readable to `out` (pino hands it one line, newline included). */
export function prettyDestination(out: { write(text: string): unknown } = process.stdout): { write(text: string): void } {
  return {
    write(text: string): void {
      const lines = text.split('\n').filter((l) => l !== '');
      out.write(lines.map((l) => `${formatLogLine(l)}\n`).join(''));
    },
  };
}
