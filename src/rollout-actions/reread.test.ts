import { describe, expect, it } from 'vitest';
import type { App } from '../api/app.ts';
import { KubeError } from '../kube/errors.ts';
import type { Stored } from '../kube/types.ts';
import { ATTEMPTS, onFreshApp } from './reread.ts';

const appAt = (rv: number): Stored<App> => ({ metadata: { name: 'web', namespace: 'shop', resourceVersion: String(rv) }, spec: {} }) as unknown as Stored<App>;

/** An apiserver whose App changes `changes` times between a read and the guarded write that follows it. */
function busyApp(changes: number) {
  let rv = 0;
  const written: string[] = [];
  return {
    read: () => Promise.resolve(appAt(++rv)),
    write: (app: Stored<App>) => {
      if (changes-- > 0) return Promise.reject(new KubeError('Conflict', 409, 'the object has been modified'));
      written.push(app.metadata.resourceVersion);
      return Promise.resolve(`written at ${app.metadata.resourceVersion}`);
    },
    written,
  };
}

describe('onFreshApp', () => {
  it('plans again on the App read again after a write refused because the App changed', async () => {
    const api = busyApp(2);
    await expect(onFreshApp(api.read, api.write)).resolves.toBe('written at 3');
    expect(api.written).toEqual(['3']);
  });

  it(`gives up after ${ATTEMPTS} attempts, with the apiserver's refusal`, async () => {
    const api = busyApp(ATTEMPTS);
    await expect(onFreshApp(api.read, api.write)).rejects.toMatchObject({ code: 'Conflict' });
    expect(api.written).toEqual([]);
  });

  it('returns any other refusal at once; Invalid only where asked for (a JSON patch whose test failed)', async () => {
    let calls = 0;
    const refuse = (code: 'Forbidden' | 'Invalid') => () => {
      calls++;
      return Promise.reject(new KubeError(code, code === 'Invalid' ? 422 : 403, 'no'));
    };
    await expect(onFreshApp(() => Promise.resolve(appAt(1)), refuse('Forbidden'))).rejects.toMatchObject({ code: 'Forbidden' });
    expect(calls).toBe(1);
    await expect(onFreshApp(() => Promise.resolve(appAt(1)), refuse('Invalid'))).rejects.toMatchObject({ code: 'Invalid' });
    expect(calls).toBe(2);
    await expect(onFreshApp(() => Promise.resolve(appAt(1)), refuse('Invalid'), ['Conflict', 'Invalid'])).rejects.toMatchObject({ code: 'Invalid' });
    expect(calls).toBe(2 + ATTEMPTS);
  });
});
