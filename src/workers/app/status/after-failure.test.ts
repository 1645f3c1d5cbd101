import { describe, expect, it } from 'vitest';
import { makeApp } from '../../../../test/unit/app/fixtures.ts';
import type { Action } from '../model/actions.ts';
import { repeatsRefusal, statusAfterFailure } from './after-failure.ts';
import { refusalMessage } from '../rollout/volume-growth.ts';

const NOW = new Date('2025-06-01T00:00:00Z');
const expand: Action = { kind: 'expandPvc', name: 'data-web-2', resourceVersion: '7', storage: '2Gi', from: '1Gi', pod: 'web-2', ordinal: 2 };
const detail = 'persistentvolumeclaims "data-web-2" is forbidden: only dynamically provisioned pvc can be resized';

describe('a refused claim expansion', () => {
  it('sets VolumeExpansionRefused naming the claim, unless the refusal heals with time', () => {
    const refused = statusAfterFailure({}, { action: expand, code: 'Forbidden', detail, heals: false, now: NOW, generation: 3 });
    expect(refused.conditions).toEqual([
      {
        type: 'VolumeExpansionRefused',
        status: 'True',
        reason: 'ExpansionRefused',
        message: refusalMessage('data-web-2', '2Gi', 'web-2', detail),
        lastTransitionTime: '2025-06-01T00:00:00Z',
        observedGeneration: 3,
      },
    ]);
    expect(refused.conditions?.[0]?.message).toMatch(/^claim data-web-2 cannot grow to 2Gi: .*forbidden/);
    expect(refused.expansionRefusedClaim).toBe('data-web-2');
    expect(statusAfterFailure({}, { action: expand, code: 'ServerError', detail: 'boom', heals: true, now: NOW, generation: 3 })).toEqual({});
  });

  it.each<[string, string, boolean, boolean]>([
    ['the same refusal again: no new Event', detail, false, true],
    ['another message', 'something else', false, false],
    ['a refusal that heals', detail, true, false],
  ])('%s', (_name, text, heals, repeats) => {
    const app = makeApp('web');
    app.status = statusAfterFailure({}, { action: expand, code: 'Forbidden', detail, heals: false, now: NOW, generation: 1 });
    expect(repeatsRefusal(app, expand, text, heals)).toBe(repeats);
  });

  it('is no repeat when the condition is not True', () => {
    expect(repeatsRefusal(makeApp('web'), expand, detail, false)).toBe(false);
  });
});
