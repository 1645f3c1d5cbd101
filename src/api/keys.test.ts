import { describe, expect, it } from 'vitest';
import { Annotation, Label, prewarmFieldManager } from './keys.ts';

describe('keys', () => {
  it('uses the upstream StatefulSet pod labels, and the apps.ebb.dev prefix for the others', () => {
    expect(Label).toEqual({
      app: 'apps.ebb.dev/app',
      revision: 'apps.ebb.dev/revision',
      podIndex: 'apps.kubernetes.io/pod-index',
      podName: 'statefulset.kubernetes.io/pod-name',
    });
    expect(Annotation.inPlaceUpdateState).toBe('apps.ebb.dev/inplace-update-state');
  });
});

describe('prewarmFieldManager', () => {
  it('names one manager per App', () => {
    expect(prewarmFieldManager('shop', 'web')).toBe('ebb-prewarm/shop/web');
    expect(prewarmFieldManager('shop', 'db')).not.toBe(prewarmFieldManager('shop', 'web'));
  });

  it('stays within the 128 characters the apiserver allows, and distinct for long names', () => {
    const a = prewarmFieldManager('n'.repeat(63), `${'a'.repeat(250)}1`);
    const b = prewarmFieldManager('n'.repeat(63), `${'a'.repeat(250)}2`);
    expect(a.length).toBeLessThanOrEqual(128);
    expect(a).not.toBe(b);
    expect(prewarmFieldManager('n'.repeat(63), 'a'.repeat(250))).toBe(prewarmFieldManager('n'.repeat(63), 'a'.repeat(250)));
  });
});
