/**
 * Steering writes are guarded by the App's resourceVersion, and the worker writes the App's status often (an
 * analysis check every interval): a write refused because the App changed since it was read is planned
 * again on the App read again, as `ebb set image` does, at most `ATTEMPTS` times. What the apiserver refuses
 * for another reason is its answer to this very request, returned as it is.
 */
import type { App } from '../api/app.ts';
import { isKubeError, type KubeErrorCode } from '../kube/errors.ts';
import type { Stored } from '../kube/types.ts';

export const ATTEMPTS = 3;

/**
 * `act` on the App as `read` returns it; again on a fresh read after a refusal with one of `codes` (Conflict;
 * a JSON patch whose resourceVersion test failed is Invalid).
 */
export async function onFreshApp<T>(
  read: () => Promise<Stored<App>>,
  act: (app: Stored<App>) => Promise<T>,
  codes: readonly KubeErrorCode[] = ['Conflict'],
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const app = await read();
    try {
      return await act(app);
    } catch (err) {
      if (!isKubeError(err, ...codes) || attempt >= ATTEMPTS) throw err;
    }
  }
}
