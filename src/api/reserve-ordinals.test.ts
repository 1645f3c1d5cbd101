import { describe, expect, it } from 'vitest';
import { isReserved, parseReserveOrdinals, replicaOrdinals } from './reserve-ordinals.ts';

describe('parseReserveOrdinals', () => {
  it.each<[string, (number | string)[] | undefined, [number, number][]]>([
    ['unset', undefined, []],
    [
      'integers and ranges, sorted',
      ['5-7', 1],
      [
        [1, 1],
        [5, 7],
      ],
    ],
    ['a one-ordinal range', ['3-3'], [[3, 3]]],
    ['overlaps merge into their union', ['1-3', '2-6', 4], [[1, 6]]],
    ['adjacent ranges merge', [1, 2, '3-4'], [[1, 4]]],
    ['duplicates are one', [2, 2, '2'], [[2, 2]]],
  ])('%s', (_, entries, ranges) => {
    expect(parseReserveOrdinals(entries)).toEqual({ ok: true, ranges });
  });

  it.each<[string, (number | string)[], string]>([
    ['a range ending before it starts', ['7-5'], '"7-5" ends before it starts'],
    ['a negative integer', [-1], '-1 is not an ordinal'],
    ['not a range', ['a-b'], 'neither an ordinal nor a range'],
    ['an open range', ['5-'], 'neither an ordinal nor a range'],
    ['past int32', ['1-2147483648'], 'goes past 2147483647'],
  ])('refuses %s', (_, entries, reason) => {
    const r = parseReserveOrdinals(entries);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.reason).toContain(reason);
  });
});

describe('replicaOrdinals', () => {
  it.each<[string, number, number, [number, number][], number[]]>([
    ['nothing reserved', 0, 3, [], [0, 1, 2]],
    ['replicas 4, [1]: 0, 2, 3, 4', 0, 4, [[1, 1]], [0, 2, 3, 4]],
    ['a reserved ordinal above the replicas changes nothing', 0, 3, [[10, 10]], [0, 1, 2]],
    ['a range below start is ignored', 5, 2, [[0, 4]], [5, 6]],
    ['a range covering start', 5, 2, [[3, 6]], [7, 8]],
    [
      'several ranges',
      0,
      4,
      [
        [0, 0],
        [2, 3],
        [5, 5],
      ],
      [1, 4, 6, 7],
    ],
    ['a wide range costs nothing to skip', 0, 2, [[1, 2_000_000_000]], [0, 2_000_000_001]],
    ['zero replicas', 0, 0, [[0, 3]], []],
  ])('%s', (_, start, replicas, ranges, expected) => {
    expect(replicaOrdinals(start, replicas, ranges)).toEqual(expected);
  });

  it('isReserved', () => {
    expect(
      [0, 1, 4, 5, 7, 8].map((o) =>
        isReserved(
          [
            [1, 1],
            [5, 7],
          ],
          o,
        ),
      ),
    ).toEqual([false, true, false, true, true, false]);
  });
});
