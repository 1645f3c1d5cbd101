/**
 * The one way a process reads its configuration: a table of settings (name, type, default, doc,
 * constraints) per process, parsed from an environment map by `parseSettings`. Parsing checks every entry and
 * every cross-field rule and throws one ConfigError listing every problem; the result is frozen. Only the
 * processes' `config.ts` files read the environment: they pass it in here. The configuration reference
 * (docs/configuration.md) is generated from the same tables (`settings-docs.ts`).
 */
import { ConfigError } from './config-error.ts';
import type { Setting } from './setting-kinds.ts';
import { readValue, type ReadResult } from './settings-types.ts';

export type { Setting } from './setting-kinds.ts';

export type Env = Readonly<Record<string, string | undefined>>;

export type Entries = Readonly<Record<string, Setting>>;

type Value<S> = S extends { readonly type: 'switch' }
  ? boolean
  : S extends { readonly type: 'int' | 'port' | 'duration' }
    ? number
    : S extends { readonly type: 'list' }
      ? readonly string[]
      : S extends { readonly type: 'enum'; readonly values: readonly (infer V)[] }
        ? V
        : string;
type Always = { readonly default: unknown } | { readonly required: true } | { readonly type: 'switch' | 'list' };

/** The parsed values of a table's entries, by key; optional settings without a default may be undefined. */
export type Values<E extends Entries> = { readonly [K in keyof E]: E[K] extends Always ? Value<E[K]> : Value<E[K]> | undefined };

/** A rule across entries. It runs only when every entry it `uses` parsed, so it never sees a refused value. */
export interface Check<E extends Entries> {
  readonly uses: readonly (keyof E & string)[];
  /** The problems (each naming the variables involved); `isSet` tells an explicit value from the default. */
  readonly problems: (values: Values<E>, isSet: (key: keyof E & string) => boolean) => readonly string[];
}

export interface Table<E extends Entries> {
  readonly entries: E;
  readonly checks: readonly Check<E>[];
}

/** Declares a table; `const` keeps literal types, so `Values` knows each entry's type and default. */
export function table<const E extends Entries>(entries: E, checks: readonly Check<NoInfer<E>>[] = []): Table<E> {
  return Object.freeze({ entries, checks: Object.freeze([...checks]) });
}

/** The trimmed value; empty counts as unset. */
function raw(env: Env, name: string): string | undefined {
  const text = env[name]?.trim();
  return text === undefined || text === '' ? undefined : text;
}

function readEntry(spec: Setting, text: string | undefined): ReadResult {
  if (text !== undefined) return readValue(spec, text);
  if (spec.required) return { problem: `${spec.name}: must be set${spec.hint ? `; ${spec.hint}` : ''}` };
  if (spec.type === 'list') return { value: Object.freeze([]) };
  if (spec.default === undefined) return { value: undefined };
  // Defaults are written the way the variable is (durations as text): read them the same way.
  const fallback = readValue(spec, typeof spec.default === 'string' ? spec.default : String(spec.default));
  if ('problem' in fallback) throw new Error(`settings table: the default of ${spec.name} is invalid: ${fallback.problem}`);
  return fallback;
}

/**
 * Reads every entry and runs every check, appending each problem to `problems`. Returns the frozen values,
 * or undefined when there was a problem (for callers that report the problems of several tables at once).
 */
export function readSettings<E extends Entries>(t: Table<E>, env: Env, problems: string[]): Values<E> | undefined {
  const before = problems.length;
  const values: Record<string, unknown> = {};
  const refused = new Set<string>();
  for (const [key, spec] of Object.entries(t.entries)) {
    const result = readEntry(spec, raw(env, spec.name));
    if ('problem' in result) {
      problems.push(result.problem);
      refused.add(key);
    } else values[key] = result.value;
  }
  const isSet = (key: string): boolean => {
    const spec = t.entries[key];
    return spec !== undefined && raw(env, spec.name) !== undefined;
  };
  for (const check of t.checks) {
    if (check.uses.every((k) => !refused.has(k))) problems.push(...check.problems(values as Values<E>, isSet));
  }
  return problems.length > before ? undefined : frozen(values as Values<E>);
}

/** Parses `env` against the table; throws one ConfigError listing every problem. The result is frozen. */
export function parseSettings<E extends Entries>(t: Table<E>, env: Env): Values<E> {
  const problems: string[] = [];
  const values = readSettings(t, env, problems);
  if (values === undefined) throw new ConfigError(problems);
  return values;
}

/**
 * Runs several config parsers over one environment and reports all their problems in one ConfigError
 * (each problem once: the parsers share settings). Returns their results in order.
 */
export function parseAll<T extends readonly unknown[]>(...parsers: { readonly [K in keyof T]: () => T[K] }): T {
  const problems = new Set<string>();
  const results = parsers.map((parse) => {
    try {
      return parse();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      for (const p of err.problems) problems.add(p);
      return undefined;
    }
  });
  if (problems.size > 0) throw new ConfigError([...problems]);
  return results as unknown as T;
}

/** Freezes plain objects and arrays, deeply (config objects are passed around and must not change). */
export function frozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.freeze(value);
    for (const v of Object.values(value)) frozen(v);
  }
  return value;
}
