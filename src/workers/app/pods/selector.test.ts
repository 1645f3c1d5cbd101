import { describe, expect, it } from 'vitest';
import type { LabelSelector } from '../../../api/meta.ts';
import { selectorMatches, selectorString } from './selector.ts';

describe('selectorMatches', () => {
  const labels = { app: 'web', tier: 'fe' };
  it.each<[string, LabelSelector, boolean]>([
    ['matchLabels equal', { matchLabels: { app: 'web' } }, true],
    ['matchLabels different value', { matchLabels: { app: 'db' } }, false],
    ['In', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['fe', 'be'] }] }, true],
    ['In missing key', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, false],
    ['NotIn', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['be'] }] }, true],
    ['NotIn missing key', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, false],
    ['empty selector matches nothing', {}, false],
  ])('%s', (_name, selector, expected) => {
    expect(selectorMatches(selector, labels)).toBe(expected);
  });
});

describe('selectorString', () => {
  it('sorts requirements by key and renders every operator', () => {
    const s: LabelSelector = {
      matchLabels: { z: '1', app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['fe', 'be'] },
        { key: 'b', operator: 'NotIn', values: ['x'] },
        { key: 'c', operator: 'Exists' },
        { key: 'd', operator: 'DoesNotExist' },
      ],
    };
    expect(selectorString(s)).toBe('app=web,b notin (x),c,!d,tier in (be,fe),z=1');
  });
});
