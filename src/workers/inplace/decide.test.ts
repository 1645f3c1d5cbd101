import { describe, expect, it } from 'vitest';
import { ConditionType, EventReason, Reason } from '../../api/keys.ts';
import { decideUpdate, fallbackTexts } from './decide.ts';
import { EMPTY_PLAN, type DiffResult } from './types.ts';

const ok: DiffResult = { ok: true, plan: EMPTY_PLAN };
const notOk: DiffResult = { ok: false, reason: 'spec.containers[0].env changed', path: '/spec/containers/0/env' };

describe('decideUpdate', () => {
  it.each<[string | undefined, DiffResult, object]>([
    [undefined, ok, { mode: 'recreate' }],
    ['ReCreate', ok, { mode: 'recreate' }],
    ['ReCreate', notOk, { mode: 'recreate' }],
    ['InPlaceIfPossible', ok, { mode: 'inPlace', plan: EMPTY_PLAN }],
    ['InPlaceIfPossible', notOk, { mode: 'recreate', fallback: { reason: notOk.ok ? '' : notOk.reason, path: '/spec/containers/0/env' } }],
    ['InPlaceOnly', ok, { mode: 'inPlace', plan: EMPTY_PLAN }],
    ['InPlaceOnly', notOk, { mode: 'refuse', reason: 'spec.containers[0].env changed', path: '/spec/containers/0/env' }],
  ])('%s with %o → %o', (policy, diff, expected) => expect(decideUpdate(policy, diff)).toEqual(expected));
});

describe('fallbackTexts', () => {
  const pod = { name: 'web-2', uid: 'u-2' };

  it('describes a fallback to recreate: condition, Normal Event and info log naming the path', () => {
    const t = fallbackTexts(decideUpdate('InPlaceIfPossible', notOk), pod, 'web-abc');
    expect(t?.condition).toEqual({
      type: ConditionType.inPlaceFallback,
      status: 'True',
      reason: Reason.inPlaceNotPossible,
      message: 'Pod web-2 is recreated for revision web-abc: spec.containers[0].env changed (path /spec/containers/0/env)',
    });
    expect(t?.event).toMatchObject({
      type: 'Normal',
      reason: EventReason.inPlaceFallback,
      action: 'Recreate',
      related: { kind: 'Pod', name: 'web-2', uid: 'u-2' },
    });
    expect(t?.log).toMatchObject({ level: 'info', fields: { path: '/spec/containers/0/env', policy: 'InPlaceIfPossible' } });
  });

  it('describes a refusal: condition InPlaceOnlyRefused and a Warning Event', () => {
    const t = fallbackTexts(decideUpdate('InPlaceOnly', notOk), pod, 'web-abc');
    expect(t?.condition.reason).toBe(Reason.inPlaceOnlyRefused);
    expect(t?.condition.message).toMatch(
      /^Pod web-2 was not updated to revision web-abc: podUpdatePolicy is InPlaceOnly and .* \(path \/spec\/containers\/0\/env\)$/,
    );
    expect(t?.event.type).toBe('Warning');
    expect(t?.log.level).toBe('warn');
  });

  it.each([
    ['in place', decideUpdate('InPlaceOnly', ok)],
    ['plain recreate', decideUpdate('ReCreate', notOk)],
  ])('has nothing to say for %s', (_n, d) => expect(fallbackTexts(d, pod, 'r')).toBeUndefined());
});
