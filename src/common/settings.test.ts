import { describe, expect, expectTypeOf, it } from 'vitest';
import { ConfigError, configProblems } from './config-error.ts';
import { frozen, parseAll, parseSettings, table, type Env } from './settings.ts';

const T = table(
  {
    text: { name: 'X_TEXT', type: 'string', default: 'plain', doc: 'text' },
    path: { name: 'X_PATH', type: 'string', pattern: /^\/\w+$/, format: 'be a path like /x', doc: 'path' },
    url: {
      name: 'X_URL',
      type: 'url',
      schemes: ['redis:'],
      format: 'redis://host',
      secret: true,
      check: (t) => (t.endsWith('/bad') ? 'is bad' : undefined),
      doc: 'url',
    },
    count: { name: 'X_COUNT', type: 'int', default: 3, min: 1, max: 10, doc: 'count' },
    wait: { name: 'X_WAIT', type: 'duration', default: '30s', min: '1s', max: '1h', doc: 'wait' },
    period: { name: 'X_PERIOD', type: 'duration', default: '5m', min: '1s', max: '1h', zeroDisables: true, doc: 'period' },
    on: { name: 'X_ON', type: 'switch', default: true, doc: 'on' },
    level: { name: 'X_LEVEL', type: 'enum', values: ['low', 'high'], default: 'low', doc: 'level' },
    port: { name: 'X_PORT', type: 'port', default: 8080, hint: 'see X_ON', doc: 'port' },
    names: { name: 'X_NAMES', type: 'list', item: /^[a-z]+$/, itemFormat: 'a lower-case name', doc: 'names' },
    token: { name: 'X_TOKEN', type: 'string', secret: true, pattern: /^t-/, format: 'start with t-', doc: 'token' },
  },
  [{ uses: ['count', 'wait'], problems: (v) => (v.count > 5 && v.wait > 60_000 ? ['X_COUNT above 5 needs X_WAIT of at most 1m'] : []) }],
);

function problemsOf(env: Env): readonly string[] {
  return configProblems(() => parseSettings(T, env));
}

describe('parseSettings', () => {
  it('applies every default and returns a deeply frozen object', () => {
    const v = parseSettings(T, {});
    expect(v).toEqual({
      text: 'plain',
      path: undefined,
      url: undefined,
      count: 3,
      wait: 30_000,
      period: 300_000,
      on: true,
      level: 'low',
      port: 8080,
      names: [],
      token: undefined,
    });
    expect(Object.isFrozen(v)).toBe(true);
    expect(Object.isFrozen(v.names)).toBe(true);
  });

  it('types each value by its entry', () => {
    const v = parseSettings(T, {});
    expectTypeOf(v.count).toEqualTypeOf<number>();
    expectTypeOf(v.on).toEqualTypeOf<boolean>();
    expectTypeOf(v.level).toEqualTypeOf<'low' | 'high'>();
    expectTypeOf(v.names).toEqualTypeOf<readonly string[]>();
    expectTypeOf(v.path).toEqualTypeOf<string | undefined>();
  });

  it.each<[string, Env, Record<string, unknown>]>([
    ['string', { X_TEXT: 'hello' }, { text: 'hello' }],
    ['string with a pattern', { X_PATH: '/abc' }, { path: '/abc' }],
    ['url', { X_URL: 'redis://:pw@host' }, { url: 'redis://:pw@host' }],
    ['int', { X_COUNT: '10' }, { count: 10 }],
    ['int, trimmed', { X_COUNT: ' 4 ' }, { count: 4 }],
    ['empty is unset', { X_COUNT: '', X_TEXT: '  ' }, { count: 3, text: 'plain' }],
    ['duration', { X_WAIT: '1m30s' }, { wait: 90_000 }],
    ['duration 0 where it switches off', { X_PERIOD: '0' }, { period: 0 }],
    ['switch true', { X_ON: 'true' }, { on: true }],
    ['switch false', { X_ON: 'false' }, { on: false }],
    ['enum', { X_LEVEL: 'high' }, { level: 'high' }],
    ['port 0', { X_PORT: '0' }, { port: 0 }],
    ['port 65535', { X_PORT: '65535' }, { port: 65_535 }],
    ['list', { X_NAMES: 'a, b,,c' }, { names: ['a', 'b', 'c'] }],
    ['secret', { X_TOKEN: 't-123' }, { token: 't-123' }],
  ])('reads a %s', (_type, env, expected) => {
    expect(parseSettings(T, env)).toMatchObject(expected);
  });

  it.each<[string, Env, string]>([
    ['string against its pattern', { X_PATH: 'abc' }, 'X_PATH: must be a path like /x (got "abc")'],
    ['text that is not a URL', { X_URL: 'nope' }, 'X_URL: not a URL; expected redis://host (got "nope")'],
    ['URL scheme', { X_URL: 'http://host' }, 'X_URL: unsupported scheme "http:"; use redis: (got "http://host")'],
    ['URL check, password masked', { X_URL: 'redis://:hunter2@host/bad' }, 'X_URL: is bad (got "redis://:***@host/bad")'],
    ['int below min', { X_COUNT: '0' }, 'X_COUNT: must be an integer from 1 to 10 (got "0")'],
    ['int that is a fraction', { X_COUNT: '2.5' }, 'X_COUNT: must be an integer from 1 to 10 (got "2.5")'],
    ['int that is a word', { X_COUNT: 'many' }, 'X_COUNT: must be an integer from 1 to 10 (got "many")'],
    ['duration without a unit', { X_WAIT: '30' }, 'X_WAIT: must be a duration such as 500ms, 30s, 10m or 1h (got "30")'],
    ['duration out of range', { X_WAIT: '2h' }, 'X_WAIT: must be between 1s and 1h (got "2h")'],
    ['duration 0 where it does not switch off', { X_WAIT: '0' }, 'X_WAIT: must be between 1s and 1h (got "0")'],
    ['duration below min where 0 switches off', { X_PERIOD: '10ms' }, 'X_PERIOD: must be 0 (off) or between 1s and 1h (got "10ms")'],
    ['enum', { X_LEVEL: 'mid' }, 'X_LEVEL: must be one of low, high (got "mid")'],
    ['port out of range, with the hint', { X_PORT: '70000' }, 'X_PORT: must be a port number 0..65535 (got "70000"); see X_ON'],
    ['list item', { X_NAMES: 'ok,Bad,Worse' }, 'X_NAMES: "Bad" is not a lower-case name (and 1 more)'],
    ['secret, never shown', { X_TOKEN: 'hunter2' }, 'X_TOKEN: must start with t-'],
  ])('refuses a %s', (_what, env, problem) => {
    expect(problemsOf(env)).toEqual([problem]);
  });

  it.each<[string, string]>([
    ['on', 'true'],
    ['yes', 'true'],
    ['1', 'true'],
    ['TRUE', 'true'],
    ['Enabled', 'true'],
    ['off', 'false'],
    ['no', 'false'],
    ['0', 'false'],
    ['False', 'false'],
  ])('refuses the switch spelling %j and says to write %s', (text, meant) => {
    expect(problemsOf({ X_ON: text })).toEqual([`X_ON: must be true or false (got ${JSON.stringify(text)}); write ${meant} instead`]);
  });

  it('refuses a switch value that means nothing, without a suggestion', () => {
    expect(problemsOf({ X_ON: 'maybe' })).toEqual(['X_ON: must be true or false (got "maybe")']);
  });

  it('lists every problem at once, cross-field rules included', () => {
    const problems = problemsOf({ X_PATH: 'x', X_LEVEL: 'mid', X_ON: 'on', X_NAMES: 'A' });
    expect(problems.map((p) => p.split(':')[0])).toEqual(['X_PATH', 'X_ON', 'X_LEVEL', 'X_NAMES']);
    expect(problemsOf({ X_COUNT: '6', X_WAIT: '2m', X_LEVEL: 'mid' })).toEqual([
      'X_LEVEL: must be one of low, high (got "mid")',
      'X_COUNT above 5 needs X_WAIT of at most 1m',
    ]);
  });

  it('skips a rule when a value it uses was refused', () => {
    expect(problemsOf({ X_COUNT: '6', X_WAIT: '2 minutes' })).toEqual(['X_WAIT: must be a duration such as 500ms, 30s, 10m or 1h (got "2 minutes")']);
  });

  it('the error message lists the problems, one per line', () => {
    expect(() => parseSettings(T, { X_COUNT: '0', X_PORT: 'x' })).toThrow(/^invalid configuration:\n {2}- X_COUNT: .*\n {2}- X_PORT: /);
  });

  it('refuses an unset required setting, with its hint', () => {
    const R = table({ node: { name: 'X_NODE', type: 'string', required: true, hint: 'set it from spec.nodeName', doc: 'node' } });
    expect(() => parseSettings(R, {})).toThrow('X_NODE: must be set; set it from spec.nodeName');
    expectTypeOf(parseSettings(R, { X_NODE: 'n' }).node).toEqualTypeOf<string>();
  });

  it('treats an invalid default as a bug in the table, not a configuration problem', () => {
    const Bad = table({ d: { name: 'X_D', type: 'duration', default: '10', min: '1s', max: '1h', doc: 'd' } });
    expect(() => parseSettings(Bad, {})).toThrow('settings table: the default of X_D is invalid');
  });
});

describe('parseAll', () => {
  it('returns every result, or one ConfigError with the problems of all parsers, each once', () => {
    expect(
      parseAll<[number, string]>(
        () => 1,
        () => 'a',
      ),
    ).toEqual([1, 'a']);
    const fail =
      (...problems: string[]) =>
      (): never => {
        throw new ConfigError(problems);
      };
    expect(() => parseAll(fail('A', 'B'), () => 1, fail('B', 'C'))).toThrow(expect.objectContaining({ problems: ['A', 'B', 'C'] }) as Error);
    expect(() => parseAll(() => JSON.parse('{') as unknown)).toThrow(SyntaxError);
  });
});

describe('frozen', () => {
  it('freezes nested objects and arrays', () => {
    const v = frozen({ a: { b: [1, { c: 2 }] } });
    expect(Object.isFrozen(v.a)).toBe(true);
    expect(Object.isFrozen(v.a.b)).toBe(true);
    expect(Object.isFrozen(v.a.b[1])).toBe(true);
  });
});
