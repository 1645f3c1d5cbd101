/** The kinds of setting a table declares: each its type, default, constraints and documentation. */

interface Base {
  /** The environment variable. */
  readonly name: string;
  /** What it does, for the configuration reference (one sentence, no trailing period). */
  readonly doc: string;
  /** Unset is a problem. A required setting has no default. */
  readonly required?: boolean;
  /** Never echoed in messages: a secret string is left out, a secret URL is shown with its password masked. */
  readonly secret?: boolean;
  /** Shown in the reference instead of the default (when unset means something that is not a value). */
  readonly defaultDoc?: string;
  /** Appended to the message when the value is refused or missing (e.g. what replaced an old spelling). */
  readonly hint?: string;
}

export interface StringSetting extends Base {
  readonly type: 'string';
  readonly default?: string;
  readonly pattern?: RegExp;
  /** What the pattern means, after "must": `be a URL path like /board`. */
  readonly format?: string;
}
export interface UrlSetting extends Base {
  readonly type: 'url';
  readonly default?: string;
  /** Accepted schemes with their colon: `redis:`. */
  readonly schemes: readonly string[];
  /** The expected shape, shown when the value is not a URL. */
  readonly format: string;
  /** Further validation of a URL with an accepted scheme; returns why it is refused. */
  readonly check?: (text: string) => string | undefined;
}
export interface IntSetting extends Base {
  readonly type: 'int';
  readonly default?: number;
  readonly min: number;
  readonly max: number;
}
/** Read like `500ms`, `30s`, `10m`, `1h30m`; the value is in milliseconds. */
export interface DurationSetting extends Base {
  readonly type: 'duration';
  readonly default?: string;
  readonly min: string;
  readonly max: string;
  /** `0` is accepted (it switches the feature off) although it is below `min`. */
  readonly zeroDisables?: boolean;
}
/** A boolean, spelled `true` or `false` and nothing else. */
export interface SwitchSetting extends Base {
  readonly type: 'switch';
  readonly default: boolean;
}
export interface EnumSetting extends Base {
  readonly type: 'enum';
  readonly values: readonly string[];
  readonly default?: string;
}
/** A TCP port, 0..65535 (0: any free port). */
export interface PortSetting extends Base {
  readonly type: 'port';
  readonly default?: number;
}
/** Comma-separated; items are trimmed, empty items dropped. Unset is the empty list. */
export interface ListSetting extends Base {
  readonly type: 'list';
  readonly item?: RegExp;
  /** What an item must be, after "is not": `a namespace name`. */
  readonly itemFormat?: string;
}

export type Setting = StringSetting | UrlSetting | IntSetting | DurationSetting | SwitchSetting | EnumSetting | PortSetting | ListSetting;
