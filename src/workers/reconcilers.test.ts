import { describe, expect, it } from 'vitest';
import type { ImageListStore } from './app/model/client.ts';
import { applyBody } from './app/prewarm/apply.ts';
import { withoutPullSecrets } from './reconcilers.ts';

describe('withoutPullSecrets', () => {
  it('writes pre-warm entries without their pull secret, and the rest unchanged', async () => {
    const applied: unknown[] = [];
    const store: ImageListStore = { list: () => Promise.resolve([]), apply: (_n, body) => Promise.resolve(void applied.push(body)) };
    const body = applyBody({
      kind: 'requestPrewarm',
      node: 'node-a',
      fieldManager: 'ebb-prewarm/shop/web',
      label: { key: 'k', value: 'v' },
      images: ['a.io/a:1'],
      pullSecret: { namespace: 'shop', name: 'regcred' },
    });
    expect(body).toMatchObject({ spec: { images: [{ image: 'a.io/a:1', pullSecret: { namespace: 'shop', name: 'regcred' } }] } });
    await withoutPullSecrets(store).apply('node-a', body, 'ebb-prewarm/shop/web');
    expect(applied).toEqual([{ ...body, spec: { images: [{ image: 'a.io/a:1' }] } }]);
    const removal = applyBody({ kind: 'removePrewarm', node: 'node-a', uid: 'u', fieldManager: 'm' });
    await withoutPullSecrets(store).apply('node-a', removal, 'm');
    expect(applied[1]).toBe(removal);
  });
});
