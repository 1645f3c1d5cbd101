import { describe, expect, it } from 'vitest';
import { mergePatch } from '../../../../harness/fakes/store.ts';
import { mergeDiff } from './merge-diff.ts';

describe('mergeDiff', () => {
  it.each([
    [{ a: 1 }, { a: 2 }, { a: 2 }],
    [{ a: 1, b: 2 }, { a: 1 }, { b: null }],
    [{ c: { step: 1, pausedAt: 't' } }, { c: { step: 2 } }, { c: { step: 2, pausedAt: null } }],
    [{ l: [1, 2] }, { l: [1] }, { l: [1] }],
    [{}, { x: { y: 1 } }, { x: { y: 1 } }],
    [{ same: { k: 1 } }, { same: { k: 1 } }, {}],
  ])('%j → %j is %j, and applying it gives the target', (before, after, patch) => {
    expect(mergeDiff(before, after)).toEqual(patch);
    expect(mergePatch(before, mergeDiff(before, after))).toEqual(after);
  });
});
