/**
 * Text from the cluster or the queues (names, condition and pod messages, annotations, job data, failure
 * reasons) made safe to print on a terminal: anyone who can write an App's status or annotations, or a pod's,
 * writes part of what `ebb rollout` and `ebb queue` print, and an escape sequence in it could move the cursor,
 * rewrite earlier lines, retitle the window or hide text. Every command prints such text through here.
 * Escape sequences are removed whole; other C0 and C1 control characters (and the Unicode controls that
 * reorder text) are removed; tabs and line breaks become spaces, or, with `keepNewlines`, line feeds stay.
 */

// ESC followed by a CSI (ESC [ … final byte), an OSC/DCS/SOS/PM/APC string (ended by BEL or ESC \), or one byte.
// eslint-disable-next-line no-control-regex
const ESCAPE_SEQUENCE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]?)/g;

const CSI_C1 = /\x9b[0-?]*[ -/]*[@-~]/g;

const SPACING = /[\t\n\v\f\r]/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string, opts: { keepNewlines?: boolean } = {}): string {
  const stripped = text.replace(ESCAPE_SEQUENCE, '').replace(CSI_C1, '');
  const spaced = stripped.replace(SPACING, (c) => (opts.keepNewlines && c === '\n' ? '\n' : ' '));
  return spaced.replace(CONTROL, '');
}

/**
 * `printable` applied to every string of a JSON-like value (object keys too), newlines included; numbers,
 * booleans and null as they are. For a whole model (an explanation) before it is rendered.
 */
export function printableDeep<T>(value: T): T {
  return clean(value) as T;
}

function clean(value: unknown): unknown {
  if (typeof value === 'string') return printable(value);
  if (Array.isArray(value)) return value.map(clean);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [printable(k), clean(v)]));
}
