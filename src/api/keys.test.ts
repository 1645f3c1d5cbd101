import { describe, expect, it } from 'vitest';
import { Annotation, Label } from './keys.ts';
import { parsePrewarmFieldManager, prewarmFieldManager, prewarmLabelKey } from './prewarm-keys.ts';

describe('keys', () => {
  it('uses the upstream StatefulSet pod labels, and the apps.ebb.dev prefix for the others', () => {
    expect(Label).toEqual({
      app: 'apps.ebb.dev/app',
      revision: 'apps.ebb.dev/revision',
      controllerRevisionHash: 'controller-revision-hash',
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

describe('parsePrewarmFieldManager', () => {
  it('gives back the App of a manager, and nothing for other managers', () => {
    expect(parsePrewarmFieldManager(prewarmFieldManager('shop', 'web'))).toEqual({ namespace: 'shop', name: 'web' });
    const longest = prewarmFieldManager('n'.repeat(63), 'a'.repeat(52));
    expect(longest.length).toBe(128);
    expect(parsePrewarmFieldManager(longest)).toEqual({ namespace: 'n'.repeat(63), name: 'a'.repeat(52) });
    for (const other of ['ebb', 'kubectl-client-side-apply', 'ebb-prewarm/', 'ebb-prewarm/shop', 'ebb-prewarm/shop/web/x', 'ebb-prewarm/Shop/web']) {
      expect(parsePrewarmFieldManager(other), other).toBeUndefined();
    }
  });
});

describe('prewarmLabelKey', () => {
  it('names the App when it fits in a label name, else hashes', () => {
    expect(prewarmLabelKey('shop', 'web')).toBe('prewarm.apps.ebb.dev/shop.web');
    const a = prewarmLabelKey('n'.repeat(63), `${'a'.repeat(51)}1`);
    const b = prewarmLabelKey('n'.repeat(63), `${'a'.repeat(51)}2`);
    expect(a).not.toBe(b);
    for (const key of [a, b]) expect(key.split('/')[1]).toMatch(/^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$/);
  });
});
