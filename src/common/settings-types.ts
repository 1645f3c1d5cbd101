/** How each setting type reads its text: a value, or why the text is refused (worded for the message). */
import { parseDuration } from './duration.ts';
import type { DurationSetting, EnumSetting, IntSetting, ListSetting, Setting, StringSetting, SwitchSetting, UrlSetting } from './setting-kinds.ts';

export type ReadResult = { readonly value: unknown } | { readonly problem: string };

type Outcome = { readonly value: unknown } | { readonly why: string; readonly echo?: false };

/** The URL with any password replaced by `***`, safe for logs and error messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = '***';
    return u.toString();
  } catch {
    // Unparsable: cut everything up to the last '@' (where credentials would end).
    const at = url.lastIndexOf('@');
    return at < 0 ? url : `***${url.slice(at)}`;
  }
}

function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

function readString(s: StringSetting, text: string): Outcome {
  if (s.pattern && !s.pattern.test(text)) return { why: `must ${s.format ?? `match ${String(s.pattern)}`}` };
  return { value: text };
}

function readUrl(s: UrlSetting, text: string): Outcome {
  if (!URL.canParse(text)) return { why: `not a URL; expected ${s.format}` };
  const { protocol } = new URL(text);
  if (!s.schemes.includes(protocol)) return { why: `unsupported scheme ${JSON.stringify(protocol)}; use ${orList(s.schemes)}` };
  const why = s.check?.(text);
  return why === undefined ? { value: text } : { why };
}

function readInt(s: Pick<IntSetting, 'min' | 'max'>, text: string, why: string): Outcome {
  const value = /^-?\d+$/.test(text) ? Number(text) : NaN;
  return Number.isSafeInteger(value) && value >= s.min && value <= s.max ? { value } : { why };
}

function tableDuration(s: DurationSetting, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new Error(`settings table: ${s.name} has a bound "${text}" that is not a duration`);
  return ms;
}

function readDuration(s: DurationSetting, text: string): Outcome {
  const ms = parseDuration(text);
  if (ms === undefined) return { why: 'must be a duration such as 500ms, 30s, 10m or 1h' };
  if (ms === 0 && s.zeroDisables) return { value: 0 };
  if (ms >= tableDuration(s, s.min) && ms <= tableDuration(s, s.max)) return { value: ms };
  return { why: `must be ${s.zeroDisables ? '0 (off) or ' : ''}between ${s.min} and ${s.max}` };
}

const TRUE_SPELLINGS = ['true', 'on', 'yes', 'y', '1', 'enable', 'enabled'];
const FALSE_SPELLINGS = ['false', 'off', 'no', 'n', '0', 'disable', 'disabled'];

/** Only `true` and `false`; other spellings of either are refused with the one to write instead. */
function readSwitch(_s: SwitchSetting, text: string): Outcome {
  if (text === 'true') return { value: true };
  if (text === 'false') return { value: false };
  const lower = text.toLowerCase();
  const meant = TRUE_SPELLINGS.includes(lower) ? 'true' : FALSE_SPELLINGS.includes(lower) ? 'false' : undefined;
  return { why: `must be true or false (got ${JSON.stringify(text)})${meant ? `; write ${meant} instead` : ''}`, echo: false };
}

function readEnum(s: EnumSetting, text: string): Outcome {
  return s.values.includes(text) ? { value: text } : { why: `must be one of ${s.values.join(', ')}` };
}

function readList(s: ListSetting, text: string): Outcome {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const bad = s.item ? items.filter((item) => !s.item?.test(item)) : [];
  const [first] = bad;
  if (first === undefined) return { value: Object.freeze(items) };
  const more = bad.length > 1 ? ` (and ${bad.length - 1} more)` : '';
  return { why: `${JSON.stringify(first)} is not ${s.itemFormat ?? `matching ${String(s.item)}`}${more}`, echo: false };
}

function outcome(spec: Setting, text: string): Outcome {
  switch (spec.type) {
    case 'string':
      return readString(spec, text);
    case 'url':
      return readUrl(spec, text);
    case 'int':
      return readInt(spec, text, `must be an integer from ${spec.min} to ${spec.max}`);
    case 'port':
      return readInt({ min: 0, max: 65_535 }, text, 'must be a port number 0..65535');
    case 'duration':
      return readDuration(spec, text);
    case 'switch':
      return readSwitch(spec, text);
    case 'enum':
      return readEnum(spec, text);
    case 'list':
      return readList(spec, text);
  }
}

/** What a message may show of a refused value: nothing of a secret string, a URL only redacted. */
function shown(spec: Setting, text: string): string {
  if (!spec.secret) return ` (got ${JSON.stringify(text)})`;
  return spec.type === 'url' ? ` (got ${JSON.stringify(redactUrl(text))})` : '';
}

/** Reads one setting's (trimmed, non-empty) text. */
export function readValue(spec: Setting, text: string): ReadResult {
  const result = outcome(spec, text);
  if ('value' in result) return result;
  const got = result.echo === false ? '' : shown(spec, text);
  return { problem: `${spec.name}: ${result.why}${got}${spec.hint ? `; ${spec.hint}` : ''}` };
}
