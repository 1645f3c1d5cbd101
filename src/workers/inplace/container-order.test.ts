import { describe, expect, it } from 'vitest';
import { parseLaunchOrder, launchBatches } from './container-order.ts';

describe('container priorities', () => {
  it.each<[string | undefined, Record<string, number>]>([
    [undefined, {}],
    ['{"envoy": 100, "app": 0}', { envoy: 100, app: 0 }],
    ['{"a": 1.5, "b": "2", "c": -3}', { c: -3 }],
    ['not json', {}],
    ['[1, 2]', {}],
  ])('parses %s', (value, expected) => expect(Object.fromEntries(parseLaunchOrder(value))).toEqual(expected));

  it.each<[string[], Record<string, number>, string[][]]>([
    [['app'], {}, [['app']]],
    [['app', 'log', 'proxy'], { proxy: 100, log: -1 }, [['proxy'], ['app'], ['log']]],
    [['a', 'b', 'c'], { a: 5, c: 5 }, [['a', 'c'], ['b']]],
    [[], { a: 1 }, []],
  ])('batches %o with %o', (names, prio, expected) => expect(launchBatches(names, new Map(Object.entries(prio)))).toEqual(expected));
});
